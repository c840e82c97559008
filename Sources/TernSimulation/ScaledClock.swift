/// A clock that runs `speed` times faster than real time: the simulated board's clock.
/// `tern demo --speed 10` runs ten simulated seconds per real second.
public struct ScaledClock: Clock {
    public typealias Duration = Swift.Duration

    public struct Instant: InstantProtocol, Sendable {
        /// Simulated time since the clock was made.
        public var offset: Swift.Duration

        public func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    public let speed: Double
    private let made: ContinuousClock.Instant
    private let base = ContinuousClock()

    public init(speed: Double = 1) {
        self.speed = max(speed, 0.001)
        self.made = ContinuousClock.now
    }

    public var now: Instant { Instant(offset: made.duration(to: base.now) * speed) }

    /// The instant the clock was made (offset zero).
    public var origin: Instant { Instant(offset: .zero) }

    public var minimumResolution: Swift.Duration { base.minimumResolution * speed }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        let realDeadline = made.advanced(by: deadline.offset / speed)
        try await base.sleep(until: realDeadline, tolerance: tolerance.map { $0 / speed })
    }
}
