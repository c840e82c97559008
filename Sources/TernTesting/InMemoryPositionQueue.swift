import Foundation
import Synchronization
import TernCore

/// A real, in-memory queue with the same contract as the SQLite one. Can be told to fail writes.
public final class InMemoryPositionQueue: PositionQueue {
    private struct State {
        var items: [QueuedPosition] = []
        var lastSequence: Int64 = 0
        var writeFailure: (any Error)?
        var quarantined: [(QueuedPosition, String)] = []
    }

    private let state = Mutex(State())
    public let queueID: UUID

    public init(queueID: UUID = UUID()) { self.queueID = queueID }

    public var items: [QueuedPosition] { state.withLock { $0.items } }

    public func failWrites(with error: (any Error)?) { state.withLock { $0.writeFailure = error } }

    public func enqueue(_ position: Position) async throws -> Int64 {
        try state.withLock { s in
            if let failure = s.writeFailure { throw failure }
            if let existing = s.items.first(where: { $0.position.id == position.id }) { return existing.sequence }
            s.lastSequence += 1
            s.items.append(QueuedPosition(sequence: s.lastSequence, position: position))
            return s.lastSequence
        }
    }

    public func oldest(limit: Int) async throws -> [QueuedPosition] {
        state.withLock { Array($0.items.prefix(limit)) }
    }

    public func acknowledge(through sequence: Int64) async throws {
        state.withLock { $0.items.removeAll { $0.sequence <= sequence } }
    }

    public func count() async throws -> Int { state.withLock { $0.items.count } }

    public func newest() async throws -> QueuedPosition? { state.withLock { $0.items.last } }

    public func remove(sequence: Int64) async throws {
        try state.withLock { s in
            if let failure = s.writeFailure { throw failure }
            s.items.removeAll { $0.sequence == sequence }
        }
    }

    /// Quarantined positions, with why.
    public var quarantined: [(QueuedPosition, String)] { state.withLock { $0.quarantined } }

    public func quarantine(sequence: Int64, reason: String) async throws {
        try state.withLock { s in
            if let failure = s.writeFailure { throw failure }
            guard let index = s.items.firstIndex(where: { $0.sequence == sequence }) else { return }
            s.quarantined.append((s.items.remove(at: index), reason))
        }
    }
}
