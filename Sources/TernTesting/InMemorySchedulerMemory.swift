import Foundation
import Synchronization
import TernCore

/// A `SchedulerMemoryStore` in memory that records every save.
public final class InMemorySchedulerMemory: SchedulerMemoryStore {
    private let state: Mutex<(saved: (memory: FixScheduler.Memory, savedAt: Date)?, saves: Int)>

    public init(_ saved: (memory: FixScheduler.Memory, savedAt: Date)? = nil) {
        state = Mutex((saved, 0))
    }

    /// The last memory saved (or given at init) and how many saves there were.
    public var saved: (memory: FixScheduler.Memory, savedAt: Date)? { state.withLock { $0.saved } }
    public var saves: Int { state.withLock { $0.saves } }

    public func loadSchedulerMemory() async throws -> (memory: FixScheduler.Memory, savedAt: Date)? { saved }

    public func saveSchedulerMemory(_ memory: FixScheduler.Memory, at time: Date) async throws {
        state.withLock { $0 = ((memory, time), $0.saves + 1) }
    }
}
