extension FixScheduler {
    /// What only a developer tunes: the cycle's and the adaptive policy's constants, each with where
    /// it comes from. "Chosen with `tern-bench policy`" means picked on the repository's traces and
    /// scenarios (issue 13), not derived; `Options` keeps what the configuration exposes.
    public struct Tuning: Sendable, Hashable {
        // MARK: The cycle

        /// Acquisition timeout when the ephemeris is stale (a warm or cold start): the MT3339's cold
        /// start is 35 s typical, the u-blox M8's 26 s (their data sheets); 120 s leaves a weak-signal
        /// start more than 3 times that.
        public var staleEphemerisTimeout: Duration = .seconds(120)
        /// How long after the session's first fix a fix better than the accuracy target is waited for
        /// before the best one past the warm-up is taken: the first fixes converge within seconds;
        /// after that the estimate follows the satellite geometry, which changes over minutes.
        public var settleTime: Duration = .seconds(5)
        /// Satellites heard while acquiring that mean the sky is there (the start is merely slow): 3,
        /// the fewest a 2-D fix uses.
        public var satellitesForSky = 3
        /// A session's first fix slower than `ephemerisDecodeHotFactor` × the hot-start TTFF and
        /// `ephemerisDecodeWarmShare` × the warm-start TTFF (9 s and 16.5 s on the MT3339) was a warm
        /// start: the receiver decoded the ephemeris then. Both far outside a hot start's spread.
        public var ephemerisDecodeHotFactor = 6.0
        public var ephemerisDecodeWarmShare = 0.5
        /// The ephemeris refresh is due this long before the hot-start window ends: the scheduler's
        /// idea of the decode time may lag the receiver's by a fix or two.
        public var refreshMargin: Duration = .seconds(30)
        /// A refresh (tracking for `ReceiverEnergy.ephemerisRefresh`) is worth up to this × the energy
        /// of the warm start it avoids: a warm start also lands its fix a TTFF late, at a time nobody chose.
        public var refreshWorth = 1.25

        // MARK: No sky

        /// Longest wait between attempts after timeouts in a row: the shipped `max_interval`, so that
        /// without sky attempts are never rarer than fixes are with it.
        public var maxBackoff: Duration = FixPolicy.shippedMaxInterval
        /// After a timeout the next attempt waits this share of the time since the last fix (at least
        /// `noSkyMinimumWait`, at most `maxBackoff`): after an hour without sky, one attempt every
        /// 2 minutes. Both chosen with `tern-bench policy`'s no-sky scenarios.
        public var noSkyGrowth = 0.03
        public var noSkyMinimumWait: Duration = .seconds(30)

        // MARK: Moving

        /// Share of the error budget the interpolation may use while moving (the rest is left to the
        /// fixes' own error). Chosen with `tern-bench policy`.
        public var moveBudgetShare = 0.7
        /// The least acceleration assumed while moving, m/s² (manoeuvres not yet seen): a straight
        /// leg is at most √(8 · 30 m · 0.7 / 0.01) ≈ 130 s. Chosen with `tern-bench policy`.
        public var minAcceleration = 0.01
        /// The acceleration assumed on the first moving fix after a stop, m/s²: a gentle start (a car
        /// pulls away at 1–3 m/s², a walker reaches 1.4 m/s in about 3 s).
        public var departureAcceleration = 0.5
        /// Bounds the moving interval by `stopRisk` × budget / speed, so a stop inside it stays near
        /// the budget. Chosen with `tern-bench policy`.
        public var stopRisk = 20.0
        /// Metres of travel over which a sharp turn seen keeps legs short (`MotionEstimate.cornerMemory`):
        /// a walker's few blocks.
        public var cornerMemory = 1000.0
        /// Smoothing of the usual moving speed per moving fix (exponential: about the last 10 fixes).
        public var speedSmoothing = 0.1
        /// The speed below which a division by the speed is not trusted, m/s (the bad-time account).
        public var speedFloor = 0.1

        // MARK: Still

        /// While still, the interval is at least `stillLegs` × budget / the usual moving speed: a
        /// departure costs about the distance covered before the next fix, in budgets (rule 3).
        /// Chosen with `tern-bench policy`; 0 turns the rule off.
        public var stillLegs = 20.0
        /// The usual moving speed assumed before any movement was seen, m/s: between a walker (1.4)
        /// and a car in town (10–15); a ship sails at about 4.
        public var assumedSpeed = 5.0
        /// The usual speed is never taken below this when sizing a still interval, m/s (a slow walk).
        public var slowestUsualSpeed = 0.5
        /// The still interval also grows as `stillGrowth` × the time still so far (after an hour
        /// parked, one fix every 3 minutes), and is at least `stillMinimum`. Chosen with `tern-bench policy`.
        public var stillGrowth = 0.05
        public var stillMinimum: Duration = .seconds(30)

        // MARK: The bad-time account

        /// Share of the time with sky the track may be off by more than the budget: the promise is the
        /// p95 of the track error, so 5 %. Every interval is capped so that one surprise inside it
        /// still fits the account.
        public var badTimeShare = 0.05
        /// Time with sky credited up front to the account (a prior of good behaviour), so the first
        /// intervals after a start are not capped to the minimum: 5 minutes.
        public var badTimeCredit: Duration = .seconds(300)

        public init() {}

        /// The tuning the daemon ships with and the benches measure.
        public static let shipped = Tuning()
    }
}
