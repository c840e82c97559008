import Foundation
import GRDB
import Logging

/// What `openRecovering` did with a damaged queue.
public struct QueueRecovery: Sendable, Hashable {
    /// Where the damaged database (and its -wal and -shm) were moved.
    public var movedTo: String
    /// Why it was taken for damaged.
    public var reason: String
    /// Positions read back from it into the new queue (their ids and sequence numbers kept).
    public var salvaged: Int
    /// The sequence number the new queue continues after (never below an old one: the server dedups
    /// batches by device and sequence).
    public var sequenceFloor: Int64
}

extension SQLitePositionQueue {
    /// Opens the queue at `path`; when the file is damaged (not a database, pages that fail
    /// `quick_check`, a read that reports corruption), moves it aside with its -wal and -shm files,
    /// starts a new queue, copies into it every position that still reads, and reports what it did.
    /// Tracking goes on: a damaged queue is never a reason to stop (systemd would restart Tern into
    /// the same failure until it gives up).
    public static func openRecovering(
        path: String, options: Options = Options(), logger: Logger = Logger(label: "tern.queue"),
        now: Date = Date()
    ) throws -> (queue: SQLitePositionQueue, recovery: QueueRecovery?) {
        let reason: String
        do {
            let queue = try SQLitePositionQueue(path: path, options: options, logger: logger)
            try queue.pool.read { db in _ = try Row.fetchAll(db, sql: "SELECT * FROM positions ORDER BY seq LIMIT 1") }
            return (queue, nil)
        } catch let QueueError.corrupt(_, why) {
            reason = why
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            reason = error.message ?? "\(error.resultCode)"
        }
        let stamp = ISO8601DateFormatter.string(from: now, timeZone: .gmt, formatOptions: [.withYear, .withMonth, .withDay, .withTime])
        let aside = "\(path).corrupt-\(stamp)"
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        let (rows, lastSequence) = salvage(aside)
        // An unreadable sequence: continue from the time in milliseconds, above any count a queue reaches.
        let floor = max(rows.map(\.seq).max() ?? 0, lastSequence ?? Int64(now.timeIntervalSince1970 * 1000))
        let queue = try SQLitePositionQueue(path: path, options: options, logger: logger)
        try queue.pool.write { db in
            for row in rows {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO positions (\(PositionRow.rawColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    arguments: StatementArguments(row.values))
            }
            // sqlite_sequence has no key on name: update its row, or add the first one.
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'positions'", arguments: [floor])
            if db.changesCount == 0 {
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('positions', ?)", arguments: [floor])
            }
            try bump("salvaged", by: rows.count, in: db)
        }
        let recovery = QueueRecovery(movedTo: aside, reason: reason, salvaged: rows.count, sequenceFloor: floor)
        logger.critical(
            "queue database was damaged: moved it aside, salvaged what reads into a new queue; tracking goes on",
            metadata: [
                "path": "\(path)", "moved_to": "\(aside)", "reason": "\(reason)", "salvaged": "\(rows.count)",
                "sequence_floor": "\(floor)",
            ])
        return (queue, recovery)
    }

    /// A raw row of `positions`, as read back from a damaged file.
    struct SalvagedRow {
        var seq: Int64
        var values: [DatabaseValue]
    }

    /// Every `positions` row that still reads from the damaged database at `path` (up to the first
    /// unreadable page), and its last sequence number if `sqlite_sequence` reads.
    static func salvage(_ path: String) -> (rows: [SalvagedRow], lastSequence: Int64?) {
        var configuration = Configuration()
        configuration.readonly = true
        guard let database = try? DatabaseQueue(path: path, configuration: configuration) else { return ([], nil) }
        var rows: [SalvagedRow] = []
        let columns = PositionRow.rawColumns
        try? database.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT \(columns) FROM positions ORDER BY seq")
            while let row = try cursor.next() {
                guard let seq = Int64.fromDatabaseValue(row["seq"]),
                      (try? PositionRow.decode(row, path: path)) != nil
                else { continue }
                rows.append(SalvagedRow(seq: seq, values: Array(row.databaseValues)))
            }
        }
        let lastSequence = try? database.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'positions'")
        }
        return (rows, lastSequence ?? nil)
    }
}
