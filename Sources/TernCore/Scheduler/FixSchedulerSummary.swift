extension FixScheduler {
    /// What the scheduler is doing and why, for `tern status`: a pure reading of its state at `now`.
    public struct Summary: Sendable, Hashable, Codable {
        /// "always-on", "fixed 60s" or "adaptive 30 m".
        public var policy: String
        /// "idle", "acquiring", "settling", "tracking", "on", "off" or "stopped".
        public var phase: String
        /// What the recent fixes say: "still", "moving", or "unknown" before the first fix.
        public var motion: String
        /// Seconds still so far (nil while moving or unknown).
        public var stillSeconds: Double?
        /// Seconds until the receiver is next powered (nil while powered or stopped).
        public var nextPowerOnSeconds: Double?
        /// Adaptive: the interval it would choose after a fix now, seconds.
        public var intervalSeconds: Double?
        /// Seconds since the receiver last decoded the ephemeris, as far as the scheduler can tell.
        public var ephemerisAgeSeconds: Double?
        public var ephemerisRefreshes: Int
        public var keptOn: Int
        public var timeouts: Int
        /// Acquisition timeouts in a row: the sky has been missing for that many attempts.
        public var consecutiveTimeouts: Int
        /// Adaptive: estimated seconds the interpolated track was off by more than the budget, and
        /// how many the policy allows so far (5 % of the time with sky + a credit); near the
        /// allowance, intervals are held short.
        public var offBudgetSeconds: Double?
        public var offBudgetAllowedSeconds: Double?
    }

    /// The summary at `now` (the scheduler's own time origin, as for `handle`).
    public func summary(now: Duration) -> Summary {
        let account = intervals.offBudget(now: now)
        return Summary(
            policy: policyName, phase: phaseName, motion: motion.last == nil ? "unknown" : motion.isStill ? "still" : "moving",
            stillSeconds: motion.isStill ? motion.stillFor(at: now).seconds : nil,
            nextPowerOnSeconds: state.offUntil.map { max(0, ($0 - now).seconds) },
            intervalSeconds: { if case .adaptive = options.policy { interval(now: now).seconds } else { nil } }(),
            ephemerisAgeSeconds: ephemerisTime.map { (now - $0).seconds },
            ephemerisRefreshes: ephemerisRefreshes, keptOn: keptOn, timeouts: timeouts,
            consecutiveTimeouts: consecutiveTimeouts,
            offBudgetSeconds: account?.seconds, offBudgetAllowedSeconds: account?.allowed)
    }

    private var policyName: String {
        switch options.policy {
        case .alwaysOn: "always-on"
        case let .fixed(interval): "fixed \(Int(interval.seconds.rounded()))s"
        case let .adaptive(budget, _, _): "adaptive \(Int(budget.rounded())) m"
        }
    }

    private var phaseName: String {
        switch state {
        case .idle: "idle"
        case .acquiring: "acquiring"
        case .settling: "settling"
        case .tracking: "tracking"
        case .alwaysOn: "on"
        case .off: "off"
        case .stopped: "stopped"
        }
    }
}
