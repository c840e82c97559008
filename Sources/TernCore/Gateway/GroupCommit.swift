/// When accepted positions are written to the durable queue, as a state machine that returns actions.
///
/// Positions are written together (one transaction, one fsync: SD-card wear at 1 Hz drops several
/// fold): at most `window.maxDelay` after the first of them was accepted, or at once when
/// `window.maxPositions` wait. One write is in flight at a time. A failed write (disk full, I/O error)
/// keeps the positions and is retried after a backoff (`retry`), not only when the next fix comes;
/// `shutdown` writes whatever waits. Beyond `maxPending` unwritten positions the oldest are dropped
/// and reported (a store that fails for days).
///
/// What a power cut can lose: positions accepted but not yet written (at most `maxDelay`, or
/// `maxPositions` of them), never one whose write has returned.
public struct GroupCommit: Sendable, Hashable {
    /// How long, and how many, accepted positions may wait to be written together.
    public struct Window: Sendable, Hashable {
        public var maxDelay: Duration
        public var maxPositions: Int

        public init(maxDelay: Duration = .seconds(1), maxPositions: Int = 10) {
            self.maxDelay = maxDelay
            self.maxPositions = max(1, maxPositions)
        }

        /// Every position written as soon as it is accepted.
        public static let immediate = Window(maxDelay: .zero, maxPositions: 1)
    }

    public enum Action: Sendable, Hashable {
        /// Write these positions in one transaction, then report `written` or `writeFailed`.
        case write([Position])
        /// Call `timerFired` at this time; nil: no wake-up needed.
        case wake(at: Duration?)
        /// This many of the oldest unwritten positions were given up (`maxPending` exceeded).
        case dropped(Int)
    }

    public let window: Window
    public let retry: Backoff
    public let maxPending: Int
    /// Accepted positions not yet written, oldest first (the first `inFlight` are being written).
    public private(set) var pending: [Position] = []
    private var inFlight = 0
    /// When the oldest pending position was accepted.
    private var oldestSince: Duration?
    /// Accepted positions kept in memory while the store fails, before the oldest are dropped: at a
    /// fix every 5 s, about 14 hours of them.
    public static let defaultMaxPending = 10_000
    /// Consecutive failed writes, and when to try again.
    public private(set) var failures = 0
    private var retryAt: Duration?

    public init(
        window: Window = Window(), retry: Backoff = Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0),
        maxPending: Int = GroupCommit.defaultMaxPending
    ) {
        self.window = window
        self.retry = retry
        self.maxPending = max(1, maxPending)
    }

    /// The filter accepted `position` at `now`.
    public mutating func accepted(_ position: Position, now: Duration) -> [Action] {
        pending.append(position)
        if oldestSince == nil { oldestSince = now }
        var actions: [Action] = []
        let excess = pending.count - inFlight - maxPending
        if excess > 0 {
            pending.removeSubrange(inFlight..<(inFlight + excess))
            actions.append(.dropped(excess))
        }
        return actions + next(now: now)
    }

    /// A wake-up requested by `.wake` arrived.
    public mutating func timerFired(now: Duration) -> [Action] { next(now: now) }

    /// The write of the first `count` pending positions committed.
    public mutating func written(now: Duration) -> [Action] {
        pending.removeFirst(inFlight)
        inFlight = 0
        failures = 0
        retryAt = nil
        oldestSince = pending.isEmpty ? nil : now
        return next(now: now)
    }

    /// The write failed: the positions stay, and are written again after a backoff.
    public mutating func writeFailed(now: Duration) -> [Action] {
        inFlight = 0
        failures += 1
        retryAt = now + retry.delay(attempt: failures, unitRandom: 0.5)
        return next(now: now)
    }

    /// Whether a write is in flight.
    public var isWriting: Bool { inFlight > 0 }

    /// Stopping: write everything that waits now, whatever the window says (once more after a failure).
    public mutating func shutdown() -> [Action] {
        guard inFlight == 0, !pending.isEmpty else { return [] }
        inFlight = pending.count
        return [.write(pending)]
    }

    /// A write when one is due and none is in flight, else the next wake-up.
    private mutating func next(now: Duration) -> [Action] {
        guard inFlight == 0, let oldestSince, !pending.isEmpty else { return inFlight == 0 ? [.wake(at: nil)] : [] }
        let due = retryAt ?? (pending.count >= window.maxPositions ? now : oldestSince + window.maxDelay)
        guard now >= due else { return [.wake(at: due)] }
        inFlight = pending.count
        return [.write(pending), .wake(at: nil)]
    }
}
