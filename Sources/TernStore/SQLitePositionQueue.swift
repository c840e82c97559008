import Foundation
import GRDB
import TernCore

/// The durable store-and-forward queue: a SQLite database in WAL mode at `path`.
///
/// Durability: the writer runs with `synchronous = FULL`, so the WAL is fsynced at every
/// commit and `enqueue` returns only once the position survives a power cut. `NORMAL` would
/// keep the database consistent but may lose the last commits on power loss, which breaks
/// "nothing lost" on a board that is switched off by pulling the plug. At GPS rates (≤ 1
/// write per second) the extra fsync is cheap, even on an SD card.
public final class SQLitePositionQueue: PositionQueue, Sendable {
    /// Where the database lives.
    public let path: String
    let pool: DatabasePool

    /// Opens (creating if needed) the queue at `path` and migrates it to the current schema.
    /// Throws `QueueError`.
    public convenience init(path: String) throws {
        try self.init(path: path, prepare: { _ in })
    }

    /// `prepare` runs on every new connection after Tern's own pragmas (tests use it).
    init(path: String, prepare: @escaping @Sendable (Database) throws -> Void) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try prepare(db)
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try Schema.migrator.migrate(pool)
        } catch {
            throw QueueError.map(error, path: path)
        }
    }

    /// Stores `position` durably and returns its sequence number. A position whose id is still
    /// queued is not stored twice: its existing sequence number is returned.
    @discardableResult
    public func enqueue(_ position: Position) async throws -> Int64 {
        let arguments = PositionRow.arguments(position, enqueuedAt: Date())
        let id = position.id.uuidString
        return try await write { db in
            try db.execute(
                sql: "INSERT INTO positions (\(PositionRow.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
                    + "ON CONFLICT(id) DO NOTHING",
                arguments: arguments)
            guard let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM positions WHERE id = ?", arguments: [id])
            else { throw QueueError.database(path: self.path, reason: "inserted position \(id) not found") }
            return seq
        }
    }

    public func oldest(limit: Int) async throws -> [QueuedPosition] {
        let path = path
        return try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM positions ORDER BY seq LIMIT ?", arguments: [max(0, limit)])
                .map { try PositionRow.decode($0, path: path) }
        }
    }

    public func acknowledge(through sequence: Int64) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM positions WHERE seq <= ?", arguments: [sequence])
        }
    }

    public func count() async throws -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM positions") ?? 0 }
    }

    /// Depth, oldest fix time and last assigned sequence number.
    public func stats() async throws -> QueueStats {
        try await read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS depth, MIN(time) AS oldest FROM positions")
            let oldest: Double? = row?["oldest"]
            let lastSequence = try Int64.fetchOne(
                db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'positions'")
            return QueueStats(
                depth: row?["depth"] ?? 0,
                oldestTime: oldest.map { Date(timeIntervalSince1970: $0) },
                lastSequence: lastSequence)
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await pool.write(body) } catch { throw QueueError.map(error, path: path) }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await pool.read(body) } catch { throw QueueError.map(error, path: path) }
    }
}
