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

        public var isClean: Bool { stale == 0 && untrue == 0 }

        enum CodingKeys: String, CodingKey {
            case checked, stale, untrue, worstErrorM = "worst_error_m", toleranceM = "tolerance_m"
        }
    }

    private struct State {
        var powerOns: [Double] = []
        var summary = Summary()
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Double
    private let utc: @Sendable (Double) -> Date
    private let truth: @Sendable (Date) -> Coordinate
    private let reported: @Sendable (Date) -> Coordinate?
    private let logger: Logger

    /// How far a stored position may lie from what the receiver reported: NMEA's 1/10,000 of a minute
    /// is 0.19 m at most.
    public static let toleranceM = 1.0

    /// Audits against `board.gps`'s own reports.
    public convenience init(board: SimulatedBoard, logger: Logger) {
        self.init(board: board, reported: { [gps = board.gps] in gps.reportedPosition(at: $0) }, logger: logger)
    }

    /// - Parameter reported: the position the receiver reported in its fix of a time, if any.
    public init(board: SimulatedBoard, reported: @escaping @Sendable (Date) -> Coordinate?, logger: Logger) {
        let clock = board.clock, gps = board.gps, route = board.route
        now = { clock.now.offset.seconds }
        utc = { gps.utc(at: $0) }
        truth = { [start = gps.utc(at: 0)] time in route.state(at: time.timeIntervalSince(start)).coordinate }
        self.reported = reported
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
        state.withLock { state in
            state.summary.checked += 1
            state.summary.worstErrorM = max(state.summary.worstErrorM, error)
        }
        let off = reported(fix.time).map { Geodesy.distance(fix.coordinate, $0) }
        if let off, off <= Self.toleranceM { return }
        state.withLock { $0.summary.untrue += 1 }
        logger.error(
            "simulated board: a stored position is not what the receiver reported at its time",
            metadata: [
                "fix_time": "\(WireTime.format(fix.time))", "off_by_m": "\(off.map { "\(Int($0.rounded()))" } ?? "no fix reported then")",
            ])
    }
}
