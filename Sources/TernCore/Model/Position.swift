import Foundation

/// A fix the filter accepted: what Tern stores and forwards. `id` is stable for ever, so the
/// server can drop a position it has already seen (idempotent delivery).
public struct Position: Sendable, Hashable, Codable, Identifiable {
    public var id: UUID
    public var fix: Fix

    public init(id: UUID = UUID(), fix: Fix) {
        self.id = id
        self.fix = fix
    }
}

/// A position as it sits in the durable queue: `sequence` increases strictly with each enqueue.
public struct QueuedPosition: Sendable, Hashable, Codable {
    public var sequence: Int64
    public var position: Position

    public init(sequence: Int64, position: Position) {
        self.sequence = sequence
        self.position = position
    }
}
