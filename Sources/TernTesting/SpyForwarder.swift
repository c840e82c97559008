import Synchronization
import TernCore

/// Counts how often it was told positions are available.
public final class SpyForwarder: Forwarding {
    private let count = Mutex(0)
    public init() {}
    public var notifications: Int { count.withLock { $0 } }
    public func positionsAvailable() { count.withLock { $0 += 1 } }
}
