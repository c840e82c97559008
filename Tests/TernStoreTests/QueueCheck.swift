import CTernCrashVFS
import Foundation
import GRDB
import TernCore
import TernTesting
@testable import TernStore

/// The crash harness's look at a queue after a power cut or a kill: opens it as Tern does when it
/// starts again (with the ordinary VFS: this process never installs the crash VFS; the open runs
/// `quick_check` and refuses a damaged file, and SQLite rebuilds the stale wal-index from the WAL),
/// runs `quick_check` and `integrity_check`, reads every queued position as the uploader would
/// (each must decode), and closes it without a checkpoint, so that the next child starts from the
/// files the crash left, not from files this check tidied up.
enum QueueCheck {
    static func reopen(_ path: String) async throws -> [QueuedPosition] {
        try await reopenWithSequence(path).queued
    }

    /// `reopen`, and the last sequence number the queue gave (`sqlite_sequence`; 0 before the first).
    static func reopenWithSequence(_ path: String) async throws -> (queued: [QueuedPosition], lastSequence: Int64) {
        let queue = try SQLitePositionQueue(path: path, logger: .quiet()) { db in
            let code = ResultCode(rawValue: ctern_keep_wal_on_close(db.sqliteConnection))
            guard code == .SQLITE_OK else { throw DatabaseError(resultCode: code, message: "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE") }
        }
        // No connection of this process may outlive the next cut: a real power cut leaves none.
        defer { try? queue.pool.close() }
        let (quick, integrity) = try await queue.pool.read { db in
            (try String.fetchAll(db, sql: "PRAGMA quick_check"), try String.fetchAll(db, sql: "PRAGMA integrity_check"))
        }
        guard quick == ["ok"], integrity == ["ok"] else {
            throw QueueError.corrupt(path: path, reason: "quick_check: \(quick.joined(separator: "; ")); integrity_check: \(integrity.joined(separator: "; "))")
        }
        let queued = try await queue.oldest(limit: 1_000_000)
        let stats = try await queue.stats()
        guard stats.inQuarantine == 0, stats.dropped.total == 0, stats.depth == queued.count else {
            throw QueueError.corrupt(path: path, reason: "after reopening: \(stats), \(queued.count) positions read")
        }
        let lastSequence = try await queue.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'positions'") ?? 0
        }
        return (queued, lastSequence)
    }
}
