import Foundation
import Testing
import TernApp
import TernCore

/// `tern replay` over every log of the NMEA corpus (`Tests/TernNMEATests/Corpus`, real receivers from
/// gpsd's regression suite): the live decoding path and the daemon's decision core, always on, with
/// the default filter, thinning on. A log joining several recordings is replayed as Tern started
/// afresh for each (each recording's first fix past the warm-up and its last stored).
/// Counts are pinned. The warm-up skips the first 3 s of each recording, still or moving (at most
/// `maxWarmUpPerSession` fixes: 3 s at the corpus's fastest rate, 2 Hz); no log may lose more than
/// `maxRejectedShare` of its usable fixes to the other rules, except those listed in `exceptions`
/// with the reason (as DIFFERENCES.md does for the decoder).
@Suite struct CorpusReplayTests {
    struct Pinned: Equatable, CustomStringConvertible {
        var usable: Int
        var accepted: Int
        var stored: Int
        var rejected: [String: Int]
        var reanchors: Int
        var description: String { "usable \(usable), accepted \(accepted), stored \(stored), rejected \(rejected), reanchors \(reanchors)" }
    }

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TernNMEATests/Corpus")

    /// The share of a log's usable fixes the rules but the warm-up may reject.
    static let maxRejectedShare = 0.2
    /// The fixes of one recording the warm-up may skip.
    static let maxWarmUpPerSession = 6

    /// Logs that lose more, and why. Each reason was checked against the log.
    static let exceptions: [String: String] = [
        "jl-micro-jlt.log": "nonstandard GGA: HDOP is always 99.0 (396 m estimated), so every fix is worse than max_accuracy_m",
        "venus634lp.log": "4 satellites, HDOP 17.3 (69 m estimated): worse than max_accuracy_m, rightly",
    ]

    static let pinned: [String: Pinned] = [
        "GPSmap-76S.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "ais-nmea.log": .init(usable: 164, accepted: 161, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "april6_2019.log": .init(usable: 1, accepted: 0, stored: 0, rejected: ["warmingUp": 1], reanchors: 0),
        "beidou-gb.log": .init(usable: 2, accepted: 0, stored: 0, rejected: ["warmingUp": 2], reanchors: 0),
        "bn-9015.log": .init(usable: 6, accepted: 3, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "bt451.log": .init(usable: 15, accepted: 3, stored: 2, rejected: ["warmingUp": 12], reanchors: 0),
        "bu353s4.log": .init(usable: 25, accepted: 22, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "cat-ms352.log": .init(usable: 40, accepted: 34, stored: 2, rejected: ["warmingUp": 6], reanchors: 0),
        "ch-4711.log": .init(usable: 7, accepted: 4, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "eXplorist110.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "ericsson-gru04.log": .init(usable: 1, accepted: 0, stored: 0, rejected: ["warmingUp": 1], reanchors: 0),
        "et-332.log": .init(usable: 19, accepted: 16, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "foretrex-201.log": .init(usable: 7, accepted: 5, stored: 2, rejected: ["warmingUp": 2], reanchors: 0),
        "garmin-10x.log": .init(usable: 9, accepted: 3, stored: 2, rejected: ["warmingUp": 6], reanchors: 0),
        "garmin15x.log": .init(usable: 7, accepted: 4, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "garmin25lp.log": .init(usable: 10, accepted: 7, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "garmin48.log": .init(usable: 14, accepted: 8, stored: 2, rejected: ["warmingUp": 6], reanchors: 0),
        "gp-320fw-2019-03-28.log": .init(usable: 20, accepted: 17, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "gp-320fw-2019-04-07-coldboot.log": .init(usable: 1, accepted: 0, stored: 0, rejected: ["warmingUp": 1], reanchors: 0),
        "gpsdf.log": .init(usable: 51, accepted: 48, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "gr601-w.log": .init(usable: 9, accepted: 6, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "hab-gpspi.log": .init(usable: 3, accepted: 0, stored: 0, rejected: ["warmingUp": 3], reanchors: 0),
        "hemi.log": .init(usable: 21, accepted: 15, stored: 2, rejected: ["warmingUp": 6], reanchors: 0),
        "hp58534a.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "iTrek.log": .init(usable: 35, accepted: 32, stored: 5, rejected: ["warmingUp": 3], reanchors: 0),
        "jl-micro-jlt.log": .init(usable: 8, accepted: 0, stored: 0, rejected: ["poorAccuracy": 8], reanchors: 0),
        "magellan315.log": .init(usable: 3, accepted: 1, stored: 1, rejected: ["warmingUp": 2], reanchors: 0),
        "motorola-t805.log": .init(usable: 16, accepted: 13, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "mt3339.log": .init(usable: 30, accepted: 27, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "mtk-3329.log": .init(usable: 5, accepted: 2, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "navika-100-fix.log": .init(usable: 20, accepted: 17, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "neo-m8n.log": .init(usable: 23, accepted: 20, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "nl402u.log": .init(usable: 9, accepted: 6, stored: 5, rejected: ["warmingUp": 3], reanchors: 0),
        "nmea-fuzzy-cases.log": .init(usable: 14, accepted: 5, stored: 2, rejected: ["warmingUp": 9], reanchors: 0),
        "nokia-ld-4w.log": .init(usable: 19, accepted: 16, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "pharos-360.log": .init(usable: 22, accepted: 19, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "pypilot.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "quectel-L70.log": .init(usable: 16, accepted: 13, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "quectel-eg25-g-2.log": .init(usable: 3, accepted: 0, stored: 0, rejected: ["warmingUp": 3], reanchors: 0),
        "quectelLC79D.log": .init(usable: 30, accepted: 27, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "rgm3800.log": .init(usable: 2, accepted: 0, stored: 0, rejected: ["warmingUp": 2], reanchors: 0),
        "rx210.log": .init(usable: 40, accepted: 37, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "sirfstarv-nmea.log": .init(usable: 59, accepted: 56, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "skytraq-PX1172RH_DS.log": .init(usable: 9, accepted: 6, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "skytraq-err.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "skytraq-fixB.log": .init(usable: 6, accepted: 3, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "sounder.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "st-teseo-liv4f.log": .init(usable: 12, accepted: 9, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "tcp-torture.log": .init(usable: 1, accepted: 0, stored: 0, rejected: ["warmingUp": 1], reanchors: 0),
        "telit-pls83-w.log": .init(usable: 10, accepted: 7, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "tn200-all.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "tnt-revolution.log": .init(usable: 0, accepted: 0, stored: 0, rejected: [:], reanchors: 0),
        "tr737A+.log": .init(usable: 8, accepted: 5, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "ublox-8.log": .init(usable: 72, accepted: 69, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "ublox-lea-4h.log": .init(usable: 9, accepted: 1, stored: 1, rejected: ["warmingUp": 8], reanchors: 0),
        "ublox-lea-5h.log": .init(usable: 20, accepted: 14, stored: 4, rejected: ["warmingUp": 6], reanchors: 0),
        "ublox-neo-m9n-nmea.log": .init(usable: 61, accepted: 58, stored: 2, rejected: ["warmingUp": 3], reanchors: 0),
        "udp-test.log": .init(usable: 1, accepted: 0, stored: 0, rejected: ["warmingUp": 1], reanchors: 0),
        "venus634lp.log": .init(usable: 6, accepted: 1, stored: 1, rejected: ["poorAccuracy": 5], reanchors: 0),
    ]

    static var logs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
    }

    @Test func everyCorpusLogIsPinned() {
        #expect(Self.logs.count == 59)
        #expect(Set(Self.logs) == Set(Self.pinned.keys))
    }

    @Test(arguments: logs)
    func replayingALogGivesItsPinnedCounts(log: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.corpus.appendingPathComponent(log)))
        let (report, stored) = LogReplay(filter: LogReplay.defaultFilter(thinning: true)).run(bytes, name: log)
        let counts = Pinned(
            usable: report.usableFixes, accepted: report.accepted, stored: report.stored, rejected: report.rejected,
            reanchors: report.reanchors)
        #expect(counts == Self.pinned[log], "\(log): \(counts)")
        // Every usable fix is rejected, stored or thinned, once.
        #expect(report.rejectedTotal + report.stored + report.thinnedTotal == report.usableFixes)
        #expect(stored.count == report.stored)
        // Stored in time order (a re-anchor may go back: bt451's second recording is earlier).
        if report.reanchors == 0 { #expect(zip(stored, stored.dropFirst()).allSatisfy { $0.time < $1.time }) }
        let warmUp = report.rejected["warmingUp"] ?? 0
        #expect(warmUp <= Self.maxWarmUpPerSession * report.sessions, "\(log): \(warmUp) fixes skipped as warm-up in \(report.sessions) recordings")
        if Self.exceptions[log] == nil, report.usableFixes > 0 {
            let share = Double(report.rejectedTotal - warmUp) / Double(report.usableFixes)
            #expect(share <= Self.maxRejectedShare, "\(log) lost \(share) of its fixes to rules other than the warm-up")
        }
    }

    @Test func withoutThinningEveryAcceptedFixIsStored() throws {
        let bytes = try [UInt8](Data(contentsOf: Self.corpus.appendingPathComponent("ublox-8.log")))
        let (report, _) = LogReplay(filter: LogReplay.defaultFilter(thinning: false)).run(bytes, name: "ublox-8.log")
        #expect(report.stored == report.accepted)
        #expect(report.thinnedTotal == 0)
    }
}
