extension FixScheduler {
    /// The policy and its tuning. The defaults are the ones the daemon ships with (an empty
    /// `[scheduler]` table) and the ones `tern-bench policy` measures.
    public struct Options: Sendable, Hashable {
        public var policy: FixPolicy
        /// Give up on a fix after this long powered (no sky).
        public var acquisitionTimeout: Duration
        /// A fix is good enough when its accuracy estimate is at most this (metres).
        public var accuracyTarget: Double
        public var energy: ReceiverEnergy
        /// Acquisition timeout when the ephemeris is stale (warm or cold start expected).
        public var staleEphemerisTimeout: Duration
        /// Adaptive: acquisition timeout when a hot start is expected (fresh ephemeris): a hot start
        /// that has not produced a fix by then means no sky, not a slow start.
        public var hotStartTimeout: Duration
        /// Longest wait between attempts after acquisition timeouts in a row.
        public var maxBackoff: Duration
        /// Adaptive: an acquisition that hears this many satellites (no-fix epochs' `satellitesHeard`) is
        /// under the sky: it may take as long as a warm start instead of `hotStartTimeout`.
        public var satellitesForSky: Int
        /// Adaptive: after a timeout the next attempt waits this share of the time since the last fix
        /// (at least `noSkyMinimumWait`, at most `maxBackoff`): the longer the sky has been missing,
        /// the rarer the attempts, yet the sky coming back is noticed soon after a short absence.
        public var noSkyGrowth: Double
        /// Adaptive: the shortest wait between attempts without sky.
        public var noSkyMinimumWait: Duration
        /// Adaptive: share of the error budget the interpolation may use while moving (rest: fix noise).
        public var moveBudgetShare: Double
        /// Adaptive: the least acceleration assumed while moving, m/s² (manoeuvres not yet seen).
        public var minAcceleration: Double
        /// Adaptive: bounds the moving interval by `stopRisk × budget / speed`.
        public var stopRisk: Double
        /// Adaptive: still interval = this × time still so far, at least `stillMinimum`.
        public var stillGrowth: Double
        public var stillMinimum: Duration
        /// Adaptive: the acceleration assumed on the first moving fix after a stop, m/s².
        public var departureAcceleration: Double
        /// Adaptive: metres of travel over which a sharp turn seen keeps legs short (`MotionEstimate.cornerMemory`).
        public var cornerMemory: Double
        /// Adaptive: while still, the interval is at least this × budget / the usual moving speed
        /// (0: off): the distance a departure covers before the next fix, in budgets.
        public var stillLegs: Double
        /// Adaptive: the usual moving speed assumed before any movement was seen, m/s.
        public var assumedSpeed: Double
        /// Adaptive: smoothing of the usual moving speed per moving fix (exponential, 0…1).
        public var speedSmoothing: Double
        /// Adaptive: the ephemeris refresh is due this long before the hot-start window ends (the
        /// scheduler's idea of the decode time may lag the receiver's by a fix or two).
        public var refreshMargin: Duration
        /// Adaptive: share of elapsed time the track may be off by more than the budget (p95 allows 5 %);
        /// every interval is capped so that one surprise inside it still fits the account.
        public var badTimeShare: Double
        /// Adaptive: elapsed time credited up front to the bad-time account (a prior of good behaviour).
        public var badTimeCredit: Duration
        /// How long after the session's first fix a fix better than `accuracyTarget` is waited for
        /// before the best one past the warm-up is taken: the first fixes converge within seconds;
        /// after that the estimate follows the satellite geometry, which changes over minutes.
        public var settleTime: Duration = .seconds(5)
        /// Adaptive: the filter's warm-up rule, asked before a fix is called good enough (the two must
        /// agree: `TernConfig` sets it from `[filter] warm_up`); the filter's default, 3 s.
        public var warmUp = WarmUpRule()
        /// Adaptive: which fixes contradict the motion seen and wait for the next to confirm them (nil:
        /// none, for tests that say so); the shipped check by default.
        public var plausibility: PlausibilityCheck? = PlausibilityCheck()

        public init(
            policy: FixPolicy = .shipped, acquisitionTimeout: Duration = .seconds(90), accuracyTarget: Double = 15,
            energy: ReceiverEnergy = .mt3339, staleEphemerisTimeout: Duration = .seconds(120),
            hotStartTimeout: Duration = .seconds(10), satellitesForSky: Int = 3, maxBackoff: Duration = .seconds(900),
            noSkyGrowth: Double = 0.03, noSkyMinimumWait: Duration = .seconds(30), moveBudgetShare: Double = 0.7,
            minAcceleration: Double = 0.01, stopRisk: Double = 20, stillGrowth: Double = 0.05,
            stillMinimum: Duration = .seconds(30), departureAcceleration: Double = 0.5,
            cornerMemory: Double = 1000,
            stillLegs: Double = 20, assumedSpeed: Double = 5, speedSmoothing: Double = 0.1,
            refreshMargin: Duration = .seconds(30), badTimeShare: Double = 0.05, badTimeCredit: Duration = .seconds(300)
        ) {
            self.policy = policy
            self.acquisitionTimeout = acquisitionTimeout
            self.accuracyTarget = accuracyTarget
            self.energy = energy
            self.staleEphemerisTimeout = staleEphemerisTimeout
            self.hotStartTimeout = hotStartTimeout
            self.satellitesForSky = satellitesForSky
            self.maxBackoff = maxBackoff
            self.noSkyGrowth = noSkyGrowth
            self.noSkyMinimumWait = noSkyMinimumWait
            self.moveBudgetShare = moveBudgetShare
            self.minAcceleration = minAcceleration
            self.stopRisk = stopRisk
            self.stillGrowth = stillGrowth
            self.stillMinimum = stillMinimum
            self.departureAcceleration = departureAcceleration
            self.cornerMemory = cornerMemory
            self.stillLegs = stillLegs
            self.assumedSpeed = assumedSpeed
            self.speedSmoothing = speedSmoothing
            self.refreshMargin = refreshMargin
            self.badTimeShare = badTimeShare
            self.badTimeCredit = badTimeCredit
        }
    }
}
