import Foundation

/// The outcome of one upload attempt.
public enum UplinkResult: Sendable, Hashable {
    /// The server confirmed every position of the batch.
    case delivered
    /// The server confirmed the positions of the batch up to and including sequence `through` (a
    /// prefix); the rest of the batch ended as `rest`.
    indirect case partial(through: Int64, rest: UplinkResult)
    /// Worth retrying later (network down, 5xx, 429, timeout); `after`: the server's `Retry-After`.
    case retryable(reason: String, after: Duration?)
    /// The server refuses this one record (a malformed value): retried a few times, then quarantined,
    /// never blocking the queue.
    case rejected(sequence: Int64, reason: String)
    /// The server refuses our configuration (authentication, unknown device): retrying the same request
    /// will not help; the uplink pauses until a human fixes it.
    case permanent(reason: String)

    /// Retryable, with no advice from the server on when.
    public static func retryable(reason: String) -> UplinkResult { .retryable(reason: reason, after: nil) }
}

/// Sends batches of positions to the server.
public protocol Uplink: Sendable {
    func send(_ batch: [QueuedPosition]) async -> UplinkResult
}
