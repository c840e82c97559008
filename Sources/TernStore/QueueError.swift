import Foundation
import GRDB

/// Why the durable queue failed, with the cause and what to do about it.
public enum QueueError: Error, Equatable, CustomStringConvertible {
    /// The disk (or SQLite's page limit) is full. Positions queued before are kept.
    case diskFull(path: String)
    /// The database or its directory cannot be opened or written (permissions, read-only mount).
    case notWritable(path: String, reason: String)
    /// The file is not a SQLite database, or its pages are damaged.
    case corrupt(path: String, reason: String)
    /// A `reject-new` queue is full: the position was not stored (counted as rejected).
    case capacityReached(path: String)
    /// Any other SQLite failure.
    case database(path: String, reason: String)

    public var description: String {
        switch self {
        case let .diskFull(path):
            "disk full writing \(path): free space; queued positions are kept"
        case let .notWritable(path, reason):
            "cannot write queue database \(path) (\(reason)): check that the data directory exists, "
                + "is writable and is owned by the user running tern"
        case let .corrupt(path, reason):
            "queue database \(path) is corrupt (\(reason)): tern run moves it aside, salvages what reads "
                + "and starts a new queue; to do it by hand, move \(path) and its -wal and -shm files away together"
        case let .capacityReached(path):
            "queue \(path) is full and its overflow policy is reject-new: the new position was not stored; "
                + "raise store.max_positions / store.max_bytes or choose store.overflow = \"drop-oldest\""
        case let .database(path, reason):
            "queue database \(path) failed: \(reason)"
        }
    }
}

extension QueueError {
    /// Maps any error thrown by GRDB/SQLite to a `QueueError` naming `path`.
    static func map(_ error: any Error, path: String) -> QueueError {
        if let queueError = error as? QueueError { return queueError }
        guard let dbError = error as? DatabaseError else {
            return .database(path: path, reason: String(describing: error))
        }
        let reason = dbError.message ?? "\(dbError.resultCode)"
        switch dbError.resultCode {
        case .SQLITE_FULL:
            return .diskFull(path: path)
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            return .notWritable(path: path, reason: reason)
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return .corrupt(path: path, reason: reason)
        default:
            return .database(path: path, reason: reason)
        }
    }
}
