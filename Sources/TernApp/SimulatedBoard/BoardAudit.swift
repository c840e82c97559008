import Foundation
import Logging
import Synchronization
import TernCore
import TernSimulation

/// Checks every position accepted and stored on the simulated board against what the board knows and
/// Tern does not: it was measured after the power-on of the cycle that delivered it (never a leftover
/// of an earlier power cycle; judged when the filter accepts it), and it is the position the receiver
/// reported in its fix of that time (not another epoch's, not altered on the way), whatever the
/// receiver's own error (`FixErrorModel`: heavy-tailed, so no distance from the route bounds it; the
/// distance is reported). `tern demo` fails and `tern run` on the simulated board warns otherwise.
///
/// The board also knows which reports its error model made faulty (`SimulatedFixes.Fault`: an outlier
/// of 100–1000 m, a start's first fix repeating the last start's position). The filter must catch
/// those its jump rule can: a faulty fix farther from the last accepted one than the rule allows
/// (`maxSpeed` × the time between them + `jumpTolerance`) that is stored anyway fails the audit. The
/// rest no rule can tell from the fixes alone (an outlier after a long interval, where the allowed
/// distance exceeds the outlier's offset; a stale repeat, which agrees with the last accepted fix):
/// they are counted, and the farthest of them from the route is reported, as their bound.
public final class BoardAudit: Sendable {
    public struct Summary: Sendable, Codable, Equatable {
        public var checked = 0
        /// Positions measured before the power-on that produced them.
        public var stale = 0
        /// Positions that are not what the receiver reported at their time (farther than `toleranceM`).
        public var untrue = 0
        /// The farthest a stored position lay from the route at its time (the receiver's error).
        public var worstErrorM = 0.0
        /// NMEA's rounding of a position, and then some.
        public var toleranceM = BoardAudit.toleranceM
        /// Faulty reports (outliers, stale repeats) stored although the filter's jump rule rejects them.
        public var faultsPastTheFilter = 0
        /// Faulty reports stored that no rule can tell from the fixes alone.
        public var faultsStored = 0
        /// The farthest of `faultsStored` from the route at its time.
        public var worstFaultErrorM = 0.0

        public var isClean: Bool { stale == 0 && untrue == 0 && faultsPastTheFilter == 0 }

        enum CodingKeys: String, CodingKey {
            case checked, stale, untrue, worstErrorM = "worst_error_m", toleranceM = "tolerance_m"
            case faultsPastTheFilter = "faults_past_the_filter", faultsStored = "faults_stored"
            case worstFaultErrorM = "worst_fault_error_m"
        }
    }

    private struct State {
        var powerOns: [Double] = []
        var summary = Summary()
        var lastAccepted: Fix?
        /// Faulty fixes accepted, by their time: whether the jump rule rejects them.
        var faultyAccepted: [Date: Bool] = [:]
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Double
    private let utc: @Sendable (Double) -> Date
    private let truth: @Sendable (Date) -> Coordinate
    private let report: @Sendable (Date) -> SimulatedFixes.Report?
    private let jump: JumpRule
    private let logger: Logger

    /// How far a stored position may lie from what the receiver reported: NMEA's 1/10,000 of a minute
    /// is 0.19 m at most.
    public static let toleranceM = 1.0

    /// Audits against `board.gps`'s own reports and faults, and `filter`'s jump rule.
    public convenience init(board: SimulatedBoard, filter: StandardLocationFilter.Options, logger: Logger) {
        self.init(board: board, report: { [gps = board.gps] in gps.report(at: $0) }, jump: filter.jumpRule, logger: logger)
    }

    /// - Parameters:
    ///   - report: the fix the receiver reported dated a time, if any, with the fault the error model
    ///     put in it.
    ///   - jump: the filter's jump rule.
    public init(board: SimulatedBoard, report: @escaping @Sendable (Date) -> SimulatedFixes.Report?, jump: JumpRule, logger: Logger) {
        let clock = board.clock, gps = board.gps, route = board.route
        now = { clock.now.offset.seconds }
        utc = { gps.utc(at: $0) }
        truth = { [start = gps.utc(at: 0)] time in route.state(at: time.timeIntervalSince(start)).coordinate }
        self.report = report
        self.jump = jump
        self.logger = logger
        board.power.observe { [weak self] on in
            guard on, let self else { return }
            let now = self.now()
            self.state.withLock { $0.powerOns.append(now) }
        }
    }

    public var summary: Summary { state.withLock { $0.summary } }

    /// Checks a fix the moment the filter accepts it (it may be written a moment later, in a group
    /// commit, perhaps after the next power-on): measured after the power-on that produced it.
    public func accepted(_ fix: Fix) {
        let accepted = now()
        let faulty = report(fix.time)?.fault != nil
        state.withLock { state in
            defer { state.lastAccepted = fix }
            guard faulty else { return }
            let rejected = state.lastAccepted.flatMap { jump.rejection(of: fix, after: $0) }
            state.faultyAccepted[fix.time] = rejected != nil
        }
        guard let poweredOn = state.withLock({ $0.powerOns.last { $0 <= accepted } }), fix.time < utc(poweredOn) else { return }
        state.withLock { $0.summary.stale += 1 }
        logger.error(
            "simulated board: an accepted position was measured before the power-on that produced it (a leftover)",
            metadata: ["fix_time": "\(WireTime.format(fix.time))", "powered_on": "\(WireTime.format(utc(poweredOn)))"])
    }

    /// Checks a position as it is stored: the receiver's report of its time.
    public func stored(_ position: Position) {
        let fix = position.fix
        let error = Geodesy.distance(fix.coordinate, truth(fix.time))
        let reported = report(fix.time)
        let faulty = reported?.fault
        let pastTheFilter = state.withLock { state in
            state.summary.checked += 1
            state.summary.worstErrorM = max(state.summary.worstErrorM, error)
            guard faulty != nil else { return false }
            if state.faultyAccepted.removeValue(forKey: fix.time) == true {
                state.summary.faultsPastTheFilter += 1
                return true
            }
            state.summary.faultsStored += 1
            state.summary.worstFaultErrorM = max(state.summary.worstFaultErrorM, error)
            return false
        }
        if pastTheFilter, let faulty {
            logger.error(
                "simulated board: a faulty report the filter's jump rule rejects was stored",
                metadata: ["fix_time": "\(WireTime.format(fix.time))", "fault": "\(faulty)", "error_m": "\(Int(error.rounded()))"])
        }
        let off = reported.map { Geodesy.distance(fix.coordinate, $0.fix.coordinate) }
        if let off, off <= Self.toleranceM { return }
        state.withLock { $0.summary.untrue += 1 }
        logger.error(
            "simulated board: a stored position is not what the receiver reported at its time",
            metadata: [
                "fix_time": "\(WireTime.format(fix.time))", "off_by_m": "\(off.map { "\(Int($0.rounded()))" } ?? "no fix reported then")",
            ])
    }
}
