extension FixScheduler {
    /// A powered session: from a power-on to the power-off.
    public struct Session: Sendable, Hashable {
        /// When the receiver was powered.
        public var poweredAt: Duration
        /// The time this session's fix was due (the fixed policy's slots are anchored on it).
        public var due: Duration
        /// The session's first usable fix (continuous tracking since then); nil before it.
        public var firstFixAt: Duration?
        /// The fix delivered to the filter whose verdict is awaited; nil when none is.
        public var awaiting: Fix?
    }

    /// An attempt at a fix: acquiring (no usable fix yet) and settling (usable fixes, none good enough).
    public struct Attempt: Sendable, Hashable {
        public var session: Session
        /// When the attempt gives up (acquiring) or takes its best fix (settling).
        public var deadline: Duration
        /// Acquiring: enough satellites heard that the sky is there (the start is merely slow).
        public var heardSky = false
        /// The best usable fix past the warm-up so far: what the deadline takes.
        public var best: Fix?
        /// Adaptive: a good-enough fix that contradicted the motion seen, waiting for the next to confirm it.
        public var suspect: Fix?
        /// Adaptive: this attempt re-takes a still thing's fix that was displaced beyond the noise.
        public var rechecking = false
        /// The fix awaited is `best`, taken at the deadline: a rejection ends the attempt.
        public var deliveringFallback = false
    }

    /// Kept on after a fix (break-even or ephemeris refresh); the next fix is delivered at `until`.
    public struct Tracking: Sendable, Hashable {
        public var session: Session
        public var until: Duration
    }

    /// Off until `until`.
    public struct Off: Sendable, Hashable {
        public var until: Duration
        /// Adaptive: the next attempt re-takes a still thing's displaced fix.
        public var recheck = false
    }
}
