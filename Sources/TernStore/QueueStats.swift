import Foundation

/// A summary of the queue for status commands.
public struct QueueStats: Sendable, Hashable {
    /// Positions waiting to be uploaded.
    public var depth: Int
    /// Fix time of the oldest waiting position, if any.
    public var oldestTime: Date?
    /// The highest sequence number ever assigned (also after it was acknowledged), if any.
    public var lastSequence: Int64?

    public init(depth: Int, oldestTime: Date?, lastSequence: Int64?) {
        self.depth = depth
        self.oldestTime = oldestTime
        self.lastSequence = lastSequence
    }
}
