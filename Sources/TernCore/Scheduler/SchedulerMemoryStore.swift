import Foundation

/// Keeps what the scheduler has learnt across restarts (`FixScheduler.Memory`), with the wall-clock
/// time it was saved at (the downtime is measured by the wall clock: the process clock restarts).
public protocol SchedulerMemoryStore: Sendable {
    /// The memory last saved and when; nil when none was.
    func loadSchedulerMemory() async throws -> (memory: FixScheduler.Memory, savedAt: Date)?
    func saveSchedulerMemory(_ memory: FixScheduler.Memory, at time: Date) async throws
}
