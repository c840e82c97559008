import Foundation
import TernCore
import TernNMEA

/// A recorded NMEA log through the real path a fix takes in the daemon: `NMEALogDecoder` (framing,
/// sentences, epoch assembly) → `StandardLocationFilter` (its rules, and thinning unless off), as an
/// always-on receiver would deliver it. `tern replay` prints the report; a test runs every corpus log.
///
/// A log carries no monotonic clock and no synchronised system clock, so the filter gets none (time
/// sanity falls back on the sequence and the re-anchor rule); the power session is inferred from the
/// fixes' times: a gap of more than `sessionGap` seconds between usable fixes starts a new one (the
/// warm-up runs from its first fix).
public struct LogReplay: Sendable {
    /// What happened to the log's fixes. Encodes with snake_case keys (`tern replay --json`).
    public struct Report: Sendable, Hashable, Codable {
        public var file: String
        /// Receiver epochs decoded: with a usable position, and without (acquiring, or an invalid quality).
        public var usableFixes = 0
        public var noFixEpochs = 0
        /// Usable fixes the filter's rules passed, and how many of them were stored (after thinning).
        public var accepted = 0
        public var stored = 0
        public var rejected: [String: Int] = [:]
        public var thinned: [String: Int] = [:]
        public var reanchors = 0
        public var sessions = 0

        public var rejectedTotal: Int { rejected.values.reduce(0, +) }
        public var thinnedTotal: Int { thinned.values.reduce(0, +) }
        /// Share of the usable fixes the rules rejected (thinning not counted: a thinned fix is not lost,
        /// the kept track passes within the budget of it).
        public var rejectedShare: Double { usableFixes > 0 ? Double(rejectedTotal) / Double(usableFixes) : 0 }

        enum CodingKeys: String, CodingKey {
            case file, accepted, stored, rejected, thinned, reanchors, sessions
            case usableFixes = "usable_fixes"
            case noFixEpochs = "no_fix_epochs"
        }
    }

    public var filter: StandardLocationFilter.Options
    public var sessionGap: Double

    public init(filter: StandardLocationFilter.Options, sessionGap: Double = 10) {
        self.filter = filter
        self.sessionGap = sessionGap
    }

    /// The daemon's default filter (`[filter]` defaults): thinning by the 30 m budget, or none.
    public static func defaultFilter(thinning: Bool) -> StandardLocationFilter.Options {
        var options = StandardLocationFilter.Options()
        if !thinning { options.thinning = nil }
        return options
    }

    /// Replays `bytes` (a whole log); returns the report and the stored fixes, oldest first.
    /// The decoder is the live path's (a late sentence does not amend an epoch already emitted).
    public func run(
        _ bytes: [UInt8], name: String, decoder: NMEALogDecoder = NMEALogDecoder(amendsCompletedEpochs: false)
    ) -> (report: Report, stored: [Fix]) {
        var decoder = decoder
        var fixes: [Fix] = []
        decoder.append(bytes) { fixes.append($0) }
        decoder.finish { fixes.append($0) }
        var report = Report(file: name)
        var sut = StandardLocationFilter(options: filter)
        var stored: [Fix] = []
        var sessionStart: Date?
        var previous: Date?
        for fix in fixes {
            guard fix.quality.isUsable else {
                report.noFixEpochs += 1
                continue
            }
            report.usableFixes += 1
            if let last = previous, abs(fix.time.timeIntervalSince(last)) <= sessionGap, sessionStart != nil {
                // same session
            } else {
                sessionStart = fix.time
                report.sessions += 1
            }
            previous = fix.time
            let age = sessionStart.map { Duration.seconds(max(0, fix.time.timeIntervalSince($0))) }
            let verdict = sut.evaluate(fix, context: FilterContext(sessionAge: age))
            if let reason = verdict.rejection { report.rejected[reason.kind, default: 0] += 1 }
            if verdict.passed { report.accepted += 1 }
            if verdict.reanchoredAfter != nil { report.reanchors += 1 }
            for reason in verdict.thinned { report.thinned[reason.kind, default: 0] += 1 }
            stored += verdict.store
        }
        stored += sut.flush()
        report.stored = stored.count
        return (report, stored)
    }
}
