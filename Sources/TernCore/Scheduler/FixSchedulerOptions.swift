extension FixScheduler {
    /// What the configuration sets (`[scheduler]`, the receiver's energy, `[filter] warm_up`), and the
    /// developer's `Tuning`. The defaults are what the daemon ships with (an empty `[scheduler]`
    /// table) and what `tern-bench policy` measures.
    public struct Options: Sendable, Hashable {
        public var policy: FixPolicy
        /// Give up on a fix after this long powered (no sky).
        public var acquisitionTimeout: Duration
        /// A fix is good enough when its accuracy estimate is at most this (metres).
        public var accuracyTarget: Double
        public var energy: ReceiverEnergy
        /// Adaptive: acquisition timeout when a hot start is expected (fresh ephemeris): a hot start
        /// that has not produced a fix by then means no sky, not a slow start.
        public var hotStartTimeout: Duration
        /// Adaptive: the filter's warm-up rule, asked before a fix is called good enough (the two must
        /// agree: `TernConfig` sets it from `[filter] warm_up`); the filter's default, 3 s.
        public var warmUp = WarmUpRule()
        /// Adaptive: which fixes contradict the motion seen and wait for the next to confirm them (nil:
        /// none, for tests that say so); the shipped check by default.
        public var plausibility: PlausibilityCheck? = PlausibilityCheck()
        public var tuning: Tuning

        public init(
            policy: FixPolicy = .shipped, acquisitionTimeout: Duration = .seconds(90), accuracyTarget: Double = 15,
            energy: ReceiverEnergy = .mt3339, hotStartTimeout: Duration = .seconds(10), tuning: Tuning = .shipped
        ) {
            self.policy = policy
            self.acquisitionTimeout = acquisitionTimeout
            self.accuracyTarget = accuracyTarget
            self.energy = energy
            self.hotStartTimeout = hotStartTimeout
            self.tuning = tuning
        }

        /// What the daemon ships with (an empty `[scheduler]` table).
        public static let shipped = Options()
    }
}

extension FixScheduler.Options {
    /// These options asking `filter`'s warm-up rule before a fix is called good enough: the one place
    /// the two are coupled (the daemon's configuration and the simulator build them through here).
    public func askingTheWarmUp(of filter: StandardLocationFilter.Options) -> Self {
        var options = self
        options.warmUp = WarmUpRule(period: filter.warmUp)
        return options
    }
}

extension FixPolicy {
    /// The error budget budget-thinning keeps the stored track to: the adaptive policy's own, the
    /// shipped one under the others. The one place the thinning tolerance is derived.
    public var thinningTolerance: Double {
        if case let .adaptive(budget, _, _) = self { budget } else { FixPolicy.shippedErrorBudget }
    }
}
