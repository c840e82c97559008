extension FixScheduler {
    /// What the adaptive policy has learnt, kept across restarts (`SchedulerMemoryStore`): without it
    /// a restarted Tern starts cautious again (short intervals for hours while its bad-time account
    /// is young) and forgets how old the receiver's ephemeris is. Times are ages at `memory(now:)`.
    public struct Memory: Sendable, Hashable, Codable {
        /// Seconds with sky the bad-time account had run, and what it held.
        public var elapsedSeconds: Double
        public var badTimeSeconds: Double
        public var typicalSpeed: Double?
        /// Seconds since the receiver last decoded the ephemeris (nil: unknown).
        public var ephemerisAgeSeconds: Double?
        /// The last accepted fix as the motion estimate kept it, and its age.
        public var lastFix: MotionEstimate.Sample?
        public var lastFixAgeSeconds: Double?
        /// Seconds the thing had been still (nil: moving or unknown).
        public var stillSeconds: Double?

        public init(
            elapsedSeconds: Double, badTimeSeconds: Double, typicalSpeed: Double? = nil, ephemerisAgeSeconds: Double? = nil,
            lastFix: MotionEstimate.Sample? = nil, lastFixAgeSeconds: Double? = nil, stillSeconds: Double? = nil
        ) {
            self.elapsedSeconds = elapsedSeconds
            self.badTimeSeconds = badTimeSeconds
            self.typicalSpeed = typicalSpeed
            self.ephemerisAgeSeconds = ephemerisAgeSeconds
            self.lastFix = lastFix
            self.lastFixAgeSeconds = lastFixAgeSeconds
            self.stillSeconds = stillSeconds
        }
    }

    /// The memory at `now` (nil before `.start`).
    public func memory(now: Duration) -> Memory? {
        guard startedAt != nil else { return nil }
        return Memory(
            elapsedSeconds: intervals.timeWithSky(now: now), badTimeSeconds: badTime,
            typicalSpeed: typicalSpeed, ephemerisAgeSeconds: ephemerisTime.map { (now - $0).seconds },
            lastFix: motion.last, lastFixAgeSeconds: motion.last.map { (now - $0.time).seconds },
            stillSeconds: motion.isStill ? motion.stillFor(at: now).seconds : nil)
    }

    /// Resumes from `memory`, saved `downtime` ago; call before `.start`. The downtime earns the
    /// account nothing and is not charged (no interval of this run could have covered it); the
    /// ephemeris and the stillness age by it (the receiver keeps its ephemeris on backup power; if
    /// it did not, the first start is merely slow: see the no-sky rules).
    public mutating func remember(_ memory: Memory, downtime: Duration) {
        guard case .idle = state else { return }
        remembered = memory
        rememberedDowntime = downtime
    }
}
