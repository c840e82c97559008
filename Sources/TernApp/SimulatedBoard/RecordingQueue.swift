import Foundation
import Synchronization
import TernCore

/// Wraps a queue and remembers the id of every position enqueued through it, so the demo can
/// prove that each one reached the collector; `stored` sees each position once it is stored.
final class RecordingQueue: PositionQueue {
    private let base: any PositionQueue
    private let ids = Mutex<[UUID]>([])
    private let stored: @Sendable (Position) -> Void

    init(_ base: any PositionQueue, stored: @escaping @Sendable (Position) -> Void = { _ in }) {
        self.base = base
        self.stored = stored
    }

    var queueID: UUID { base.queueID }

    var enqueuedIDs: [UUID] { ids.withLock { $0 } }

    func enqueue(_ position: Position) async throws -> Int64 {
        let sequence = try await base.enqueue(position)
        ids.withLock { $0.append(position.id) }
        stored(position)
        return sequence
    }

    func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult {
        let result = try await base.enqueue(contentsOf: positions)
        ids.withLock { $0.append(contentsOf: positions.map(\.id)) }
        positions.forEach(stored)
        return result
    }

    func oldest(limit: Int) async throws -> [QueuedPosition] { try await base.oldest(limit: limit) }
    func acknowledge(through sequence: Int64) async throws { try await base.acknowledge(through: sequence) }
    func count() async throws -> Int { try await base.count() }
    func newest() async throws -> QueuedPosition? { try await base.newest() }
    func remove(sequence: Int64) async throws { try await base.remove(sequence: sequence) }
    func quarantine(sequence: Int64, reason: String) async throws { try await base.quarantine(sequence: sequence, reason: reason) }
}
