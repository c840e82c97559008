import Foundation
import TernCore
import TernNMEA

/// A recorded NMEA log through the real path a fix takes in the daemon: `NMEALogDecoder` (framing,
/// sentences, epoch assembly) → `GatewayCore` with the always-on policy (the scheduler, freshness, the
/// filter's rules and thinning unless off), as the daemon runs it on a receiver that is never switched
/// off. `tern replay` prints the report; a test runs every corpus log.
///
/// A log carries no monotonic clock and no synchronised system clock: the core's clock follows the
/// fixes' times (never backwards: a fix dated earlier than the last arrives at the same time), and
/// time sanity falls back on the sequence and the re-anchor rule. Usable fixes more than `sessionGap`
/// seconds apart with no epoch between them are a new recording (the log was stopped and started
/// again, or joins two), replayed as Tern started afresh for it: a new core, the warm-up from its
/// first fix, no filter reference. A receiver that reported epochs without a fix in between was
/// running all along: one core, as the daemon keeps it.
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
        var stored: [Fix] = []
        var session: Session?
        var previous: Date?
        /// Epochs without a fix since the last usable one: the receiver was running, only without a fix.
        var running = false
        for fix in fixes {
            if fix.quality.isUsable {
                defer { running = false }
                if let last = previous, abs(fix.time.timeIntervalSince(last)) <= sessionGap || running, session != nil {
                    // the same recording
                } else {
                    if let ended = session { stored += ended.finish(into: &report) }
                    session = Session(configuration: configuration, start: fix.time)
                }
                previous = fix.time
            }
            guard session != nil else {
                report.noFixEpochs += 1  // before the first fix: nothing for the core to decide
                continue
            }
            if !fix.quality.isUsable { running = true }
            stored += session?.receive(fix) ?? []
        }
        if let ended = session { stored += ended.finish(into: &report) }
        report.stored = stored.count
        return (report, stored)
    }

    /// The core's configuration: always on, this replay's filter, every accepted position written at once.
    var configuration: GatewayCore.Configuration {
        GatewayCore.Configuration(scheduler: FixScheduler.Options(policy: .alwaysOn), filter: filter, commitWindow: .immediate)
    }

    /// One recording through one core, as the daemon's shell performs its actions.
    private struct Session {
        var core: GatewayCore
        let start: Date
        var now = Duration.zero

        init(configuration: GatewayCore.Configuration, start: Date) {
            core = GatewayCore(configuration: configuration)
            self.start = start
            var stored: [Fix] = []
            perform(core.start(now: .zero), stored: &stored)
        }

        /// The receiver reported `fix`: its time on the core's clock, the actions performed; returns what was written.
        mutating func receive(_ fix: Fix) -> [Fix] {
            now = max(now, .seconds(fix.time.timeIntervalSince(start)))
            var stored: [Fix] = []
            perform(core.fixReceived(fix, now: now), stored: &stored)
            return stored
        }

        /// The end of the recording: thinning's held fix is kept and written; the counters go to `report`.
        consuming func finish(into report: inout Report) -> [Fix] {
            var stored: [Fix] = []
            perform(core.shutdownWrites(now: now), stored: &stored)
            perform(core.stop(now: now), stored: &stored)
            let counters = core.status(now: now)
            report.sessions += 1
            report.usableFixes += counters.fixesSeen
            report.noFixEpochs += counters.noFixEpochs
            report.accepted += counters.fixesAccepted
            report.reanchors += counters.reanchors
            report.rejected.merge(counters.rejections, uniquingKeysWith: +)
            report.thinned.merge(counters.thinned, uniquingKeysWith: +)
            return stored
        }

        /// Performs `actions` as the daemon's `Gateway` does, on a receiver that is always on and a
        /// store that always succeeds.
        private mutating func perform(_ actions: [GatewayCore.Action], stored: inout [Fix]) {
            for action in actions {
                switch action {
                case .powerOn: core.powerSwitched(on: true, now: now)
                case .powerOff: core.powerSwitched(on: false, now: now)
                case let .write(positions):
                    stored += positions.map(\.fix)
                    perform(core.written(EnqueueResult(stored: positions.count), now: now), stored: &stored)
                case .wake, .commitWake, .accepted, .saveMemory, .note, .trustedTime: break
                }
            }
        }
    }
}
