import Foundation
import GRDB
import TernCore

/// Read-only access to a queue while the daemon writes it: `tern status` and `tern queue`. Opens the
/// database with `SQLITE_OPEN_READONLY`, never migrates or writes, and keeps each read transaction
/// short (a long one would keep the daemon's checkpoints from finishing).
public struct QueueReader: Sendable {
    public let path: String
    private let database: DatabaseQueue

    /// Throws `QueueError` (`.notWritable` names a missing file or permissions).
    public init(path: String) throws {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw QueueError.notWritable(path: path, reason: "no such file (has tern run started here?)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        do { database = try DatabaseQueue(path: path, configuration: configuration) } catch {
            throw QueueError.map(error, path: path)
        }
    }

    public func stats() throws -> QueueStats {
        try read { db in try QueueStats.read(db) }
    }

    /// Queued positions in sequence order, from the oldest (or the first at or after `since`, by fix
    /// time), at most `limit`; rows that do not decode are skipped (they will be quarantined).
    public func positions(since: Date? = nil, after sequence: Int64 = 0, limit: Int) throws -> [QueuedPosition] {
        let path = path
        return try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM positions WHERE seq > ? AND time >= ? ORDER BY seq LIMIT ?",
                arguments: [sequence, since?.timeIntervalSince1970 ?? -Double.infinity, limit]
            ).compactMap { try? PositionRow.decode($0, path: path) }
        }
    }

    /// A quarantined row: what it held (as text) and why it was moved.
    public struct QuarantinedRow: Sendable, Hashable {
        public var sequence: Int64
        public var columns: [String: String]
        public var reason: String
        public var quarantinedAt: Date
    }

    public func quarantine(after sequence: Int64 = 0, limit: Int) throws -> [QuarantinedRow] {
        try read { db in
            guard try db.tableExists("quarantine") else { return [] }
            return try Row.fetchAll(
                db, sql: "SELECT * FROM quarantine WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [sequence, limit]
            ).map { row in
                var columns: [String: String] = [:]
                for (name, value) in row where !["seq", "reason", "quarantined_at"].contains(name) {
                    columns[name] = value.isNull ? "" : String.fromDatabaseValue(value) ?? "\(value)"
                }
                return QuarantinedRow(
                    sequence: Int64.fromDatabaseValue(row["seq"]) ?? -1, columns: columns,
                    reason: String.fromDatabaseValue(row["reason"]) ?? "",
                    quarantinedAt: Date(timeIntervalSince1970: Double.fromDatabaseValue(row["quarantined_at"]) ?? 0))
            }
        }
    }

    /// `PRAGMA quick_check` (read-only): "ok", or what is wrong.
    public func quickCheck() throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(5)") }
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch { throw QueueError.map(error, path: path) }
    }
}
