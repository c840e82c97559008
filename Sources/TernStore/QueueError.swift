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
            "queue database \(path) is corrupt (\(reason)): move the file aside "
                + "(e.g. mv \(path) \(path).corrupt) and restart; a new empty queue will be created"
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
