import Foundation
import Logging
import Synchronization
import TernCore
import TernSimulation

/// Checks every position accepted and stored on the simulated board against what the board knows and
/// Tern does not: it was measured after the power-on of the cycle that delivered it (never a leftover
/// of an earlier power cycle; judged when the filter accepts it), and it lies within the fix noise of
/// the simulated route at its own time (its time is when it was measured). `tern demo` fails and `tern run` on the simulated board warns otherwise.
public final class BoardAudit: Sendable {
    public struct Summary: Sendable, Codable, Equatable {
        public var checked = 0
        /// Positions measured before the power-on that produced them.
        public var stale = 0
        /// Positions farther from the route at their time than `noiseBoundM`.
        public var untrue = 0
        public var worstErrorM = 0.0
        public var noiseBoundM = 0.0

        public var isClean: Bool { stale == 0 && untrue == 0 }

        enum CodingKeys: String, CodingKey {
            case checked, stale, untrue, worstErrorM = "worst_error_m", noiseBoundM = "noise_bound_m"
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
    private let logger: Logger

    /// The largest distance a fix may lie from the truth: 5 σ of the noisiest (first) fixes of `model`.
    public static func noiseBound(_ model: ReceiverModel) -> Double { 5 * model.sigma * model.noisyFactor.upperBound }

    public init(board: SimulatedBoard, logger: Logger) {
        let clock = board.clock, gps = board.gps, route = board.route
        now = { clock.now.offset.seconds }
        utc = { gps.utc(at: $0) }
        truth = { [start = gps.utc(at: 0)] time in route.state(at: time.timeIntervalSince(start)).coordinate }
        self.logger = logger
        state.withLock { $0.summary.noiseBoundM = Self.noiseBound(board.model) }
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

    /// Checks a position as it is stored: within the fix noise of the route at its time.
    public func stored(_ position: Position) {
        let fix = position.fix
        let error = Geodesy.distance(fix.coordinate, truth(fix.time))
        let bound = state.withLock { state in
            state.summary.checked += 1
            state.summary.worstErrorM = max(state.summary.worstErrorM, error)
            return state.summary.noiseBoundM
        }
        if error > bound {
            state.withLock { $0.summary.untrue += 1 }
            logger.error(
                "simulated board: a stored position is farther from the route at its time than the fix noise allows",
                metadata: ["fix_time": "\(WireTime.format(fix.time))", "error_m": "\(Int(error))", "bound_m": "\(Int(bound))"])
        }
    }
}
