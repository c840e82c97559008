import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// The gpsd regression logs in `Corpus/` (see its README), decoded the way `tern nmea decode` does.
enum ConformanceCorpus {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    static var logNames: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".log") }.map { String($0.dropLast(4)) }.sorted()
    }

    /// The JSON lines `tern nmea decode` prints for a log (same decoder, same record writer, 64 KiB reads).
    static func decode(_ name: String) throws -> Data {
        let input = try Data(contentsOf: directory.appendingPathComponent("\(name).log"))
        var sut = NMEALogDecoder()
        var output: [UInt8] = []
        let emit: (Fix) -> Void = { GPSDFixRecord($0).write(to: &output) }
        var offset = 0
        let bytes = [UInt8](input)
        while offset < bytes.count {
            let end = min(offset + 65_536, bytes.count)
            sut.append(Array(bytes[offset..<end]), emit: emit)
            offset = end
        }
        sut.finish(emit: emit)
        return Data(output)
    }

    static func compare(_ name: String) throws -> FixComparison {
        let reference = try ComparableFix.load(
            jsonLines: Data(contentsOf: directory.appendingPathComponent("\(name).fixes.jsonl")))
        let candidate = try ComparableFix.load(jsonLines: decode(name))
        return FixComparison(reference: reference, candidate: candidate)
    }
}

struct ConformanceTests {
    /// Minimum share of gpsd's fixes Tern must report at the same time (docs/receivers.md, "Agreement with gpsd": ≥ 99.5 %).
    static let minimumMatchedRate = 0.995
    /// Fixes Tern reports that gpsd does not, per log: each one explained in `Corpus/DIFFERENCES.md`.
    /// The test fails when a log has more (or a log not listed has any).
    static let explainedExtras: [String: Int] = [
        "ais-nmea": 3, "april6_2019": 1, "beidou-gb": 1, "bn-9015": 1, "bt451": 3, "foretrex-201": 1,
        "garmin48": 6, "gp-320fw-2019-03-28": 1, "gp-320fw-2019-04-07-coldboot": 1, "hemi": 15,
        "motorola-t805": 1, "neo-m8n": 1, "pharos-360": 1, "rgm3800": 1, "tcp-torture": 1, "tr737A+": 1,
        "ublox-lea-4h": 2, "ublox-lea-5h": 1, "venus634lp": 1,
    ]
    /// gpsd fixes Tern does not report at the same time, per log (two gpsd date errors and one report gpsd
    /// made mid-cycle, see DIFFERENCES.md).
    static let explainedMissing: [String: Int] = ["april6_2019": 1, "magellan315": 1, "tcp-torture": 1]

    @Test func matchesGPSDFixesAcrossTheCorpus() throws {
        var total = FixComparison()
        var table = ["log                              gpsd  tern match miss extra  lat  lon  alt speed track mode"]
        var unexplained: [String] = []
        for name in ConformanceCorpus.logNames {
            let result = try ConformanceCorpus.compare(name)
            total = total + result
            table.append(Self.row(name, result))
            if result.extra.count > Self.explainedExtras[name, default: 0] { unexplained.append("\(name) extra \(result.extra)") }
            if result.missing.count > Self.explainedMissing[name, default: 0] { unexplained.append("\(name) missing \(result.missing)") }
        }
        table.append(Self.row("TOTAL", total))
        let matchedRate = Double(total.matched) / Double(max(1, total.referenceFixes))
        let extraRate = Double(total.extra.count) / Double(max(1, total.candidateFixes))
        table.append(String(
            format: "matched %.2f%% of gpsd's fixes, extra %.2f%% of Tern's; missing %@; extra %@",
            matchedRate * 100, extraRate * 100, total.missing.description, total.extra.description))
        print(table.joined(separator: "\n"))

        #expect(ConformanceCorpus.logNames.count == 59)
        #expect(matchedRate >= Self.minimumMatchedRate)
        #expect(unexplained.isEmpty, "unexplained differences: \(unexplained)")
        #expect(total.extra.count <= Self.explainedExtras.values.reduce(0, +))
        #expect(extraRate < 0.05)
        #expect(total.mismatches["lat", default: 0] == 0)
        #expect(total.mismatches["lon", default: 0] == 0)
        #expect(total.mismatches["alt", default: 0] == 0)
        #expect(total.mismatches["speed", default: 0] == 0)
        #expect(total.mismatches["track", default: 0] == 0)
    }

    private static func row(_ name: String, _ result: FixComparison) -> String {
        func pad(_ value: Any, _ width: Int) -> String {
            let text = "\(value)"
            return String(repeating: " ", count: max(0, width - text.count)) + text
        }
        let fields = ["lat", "lon", "alt", "speed", "track"].map { pad(result.mismatches[$0, default: 0], 5) }
        return name.padding(toLength: 30, withPad: " ", startingAt: 0) + pad(result.referenceFixes, 6)
            + pad(result.candidateFixes, 6) + pad(result.matched, 6) + pad(result.missing.count, 5)
            + pad(result.extra.count, 6) + fields.joined() + pad(result.modeDifferences, 5)
    }
}
