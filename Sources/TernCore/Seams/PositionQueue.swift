import Foundation

/// The durable store-and-forward queue.
public protocol PositionQueue: Sendable {
    /// Drawn once when the queue was created: with it, a sequence number names one position across
    /// every queue a device ever had (the uplinks' idempotency keys).
    var queueID: UUID { get }
    /// Durably stores a position; returns its sequence number. Returns once the write is on disk.
    @discardableResult
    func enqueue(_ position: Position) async throws -> Int64
    /// Durably stores positions in one transaction (a group commit), oldest first; returns once they
    /// are on disk, with what the queue's capacity rules dropped to make room (or refused).
    func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult
    /// The oldest positions not yet acknowledged, in sequence order.
    func oldest(limit: Int) async throws -> [QueuedPosition]
    /// Removes every position with a sequence ≤ `sequence`.
    func acknowledge(through sequence: Int64) async throws
    /// How many positions wait to be uploaded.
    func count() async throws -> Int
    /// The newest queued position (sent first by a live-first uplink), if any.
    func newest() async throws -> QueuedPosition?
    /// Removes one position the server confirmed out of order (live first).
    func remove(sequence: Int64) async throws
    /// Moves a position the server refuses for good out of the queue, keeping it (and why) apart.
    func quarantine(sequence: Int64, reason: String) async throws
}

extension PositionQueue {
    /// One write per position, for queues without transactions.
    public func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult {
        for position in positions { try await enqueue(position) }
        return EnqueueResult(stored: positions.count)
    }
}

/// What one durable write did.
public struct EnqueueResult: Sendable, Hashable {
    /// Positions stored by the write.
    public var stored: Int
    /// Positions the queue's capacity rules dropped (queued ones) or refused (new ones).
    public var dropped: QueueDrops

    public init(stored: Int, dropped: QueueDrops = QueueDrops()) {
        self.stored = stored
        self.dropped = dropped
    }
}

/// Positions a bounded queue gave up, by rule. Every one is counted; none silently.
public struct QueueDrops: Sendable, Hashable, Codable {
    /// The oldest queued positions, dropped for new ones (`drop-oldest`).
    public var oldest = 0
    /// Every other position of the oldest stretch, dropped for new ones (`thin-oldest`).
    public var thinned = 0
    /// New positions refused because the queue was full (`reject-new`).
    public var rejectedNew = 0
    /// Queued positions older than the maximum age.
    public var expired = 0

    public init(oldest: Int = 0, thinned: Int = 0, rejectedNew: Int = 0, expired: Int = 0) {
        self.oldest = oldest
        self.thinned = thinned
        self.rejectedNew = rejectedNew
        self.expired = expired
    }

    public var total: Int { oldest + thinned + rejectedNew + expired }

    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(
            oldest: lhs.oldest + rhs.oldest, thinned: lhs.thinned + rhs.thinned,
            rejectedNew: lhs.rejectedNew + rhs.rejectedNew, expired: lhs.expired + rhs.expired)
    }
}
