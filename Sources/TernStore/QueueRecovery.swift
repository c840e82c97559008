import Foundation
import GRDB
import Logging

/// What `openRecovering` did with a damaged queue.
public struct QueueRecovery: Sendable, Hashable {
    /// Where the damaged database (and its -wal and -shm) were moved.
    public var movedTo: String
    /// Why it was taken for damaged (or that an earlier salvage was resumed).
    public var reason: String
    /// Positions read back from it into the new queue (their ids and sequence numbers kept), in all.
    public var salvaged: Int
    /// The sequence number the new queue continues after (never below an old one: the server dedups
    /// batches by device and sequence).
    public var sequenceFloor: Int64
}

/// The points of a recovery, in order, where a crash may cut it (tests kill the process at each).
public enum QueueRecoveryStep: Sendable, Hashable {
    /// The damaged files were renamed aside.
    case movedAside
    /// The new queue exists and holds the old sequence floor and the salvage's record.
    case floorRecorded
    /// A chunk of positions was copied (and the salvage's progress with it, in one transaction).
    case chunkCopied(through: Int64)
    /// The salvage is marked done.
    case finished
}

extension SQLitePositionQueue {
    /// Positions copied per transaction while salvaging: memory stays small whatever the backlog.
    public static let salvageChunk = 1000

    /// Opens the queue at `path`. When the file is damaged (not a database, pages that fail
    /// `quick_check`, a read that reports corruption), moves it aside with its -wal and -shm files,
    /// starts a new queue and copies into it every position that still reads; reports what it did.
    /// Tracking goes on: a damaged queue is never a reason to stop.
    ///
    /// Crash-safe at every step (`QueueRecoveryStep`): the damaged file is only renamed, never
    /// changed; the new queue records the old sequence floor before anything is copied; positions are
    /// copied in chunks of `salvageChunk`, each with its progress in one transaction; every
    /// `<path>.corrupt-*` not marked done in the queue is salvaged (or resumed) at each open, so a
    /// salvage cut short finishes at the next start and no backlog is stranded aside.
    public static func openRecovering(
        path: String, options: Options = Options(), logger: Logger = Logger(label: "tern.queue"),
        now: Date = Date(), step: (QueueRecoveryStep) -> Void = { _ in }
    ) throws -> (queue: SQLitePositionQueue, recovery: QueueRecovery?) {
        completeInterruptedMove(path)
        let marker = damageMarker(path)
        var damage = FileManager.default.contents(atPath: marker).map {
            "found corrupt while running: " + String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if damage == nil, FileManager.default.fileExists(atPath: path) {
            do {
                let queue = try SQLitePositionQueue(path: path, options: options, logger: logger)
                try queue.pool.read { db in _ = try Row.fetchAll(db, sql: "SELECT * FROM positions ORDER BY seq LIMIT 1") }
                let resumed = try queue.salvagePending(logger: logger, now: now, step: step)
                _ = try queue.importSpill(logger: logger)
                return (queue, resumed)
            } catch let QueueError.corrupt(_, why) {
                damage = why
            } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
                damage = error.message ?? "\(error.resultCode)"
            }
        }
        if let damage {
            let aside = "\(path).corrupt-\(stamp(now))"
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            // Moved: the marker has done its work (a crash from here on resumes from the files aside).
            try? FileManager.default.removeItem(atPath: marker)
            step(.movedAside)
            logger.critical(
                "queue database was damaged: moved it aside; salvaging what reads into a new queue, tracking goes on",
                metadata: ["path": "\(path)", "moved_to": "\(aside)", "reason": "\(damage)"])
        }
        let queue = try SQLitePositionQueue(path: path, options: options, logger: logger)
        let recovery = try queue.salvagePending(logger: logger, now: now, step: step)
        _ = try queue.importSpill(logger: logger)
        guard var report = recovery else { return (queue, nil) }
        if let damage { report.reason = damage }
        return (queue, report)
    }

    /// A crash between the renames that move a damaged queue aside (main file first, then -wal and
    /// -shm) leaves the -wal or -shm at `path` with no database: they go where the main file went, so
    /// that a new queue never replays a damaged queue's log.
    static func completeInterruptedMove(_ path: String) {
        let files = FileManager.default
        guard !files.fileExists(atPath: path), let latest = damagedFiles(beside: path).last else { return }
        for suffix in ["-wal", "-shm"] where files.fileExists(atPath: path + suffix) && !files.fileExists(atPath: latest + suffix) {
            try? files.moveItem(atPath: path + suffix, toPath: latest + suffix)
        }
    }

    private static func stamp(_ now: Date) -> String {
        ISO8601DateFormatter.string(from: now, timeZone: .gmt, formatOptions: [.withYear, .withMonth, .withDay, .withTime])
    }

    /// A queue from before schema v4 salvaged its damaged files in full when it moved them aside:
    /// record them as done, so that they are not salvaged (and uploaded) a second time.
    static func markSalvagedBeforeV4(path: String, pool: DatabasePool) throws {
        let sources = damagedFiles(beside: path).map { ($0 as NSString).lastPathComponent }
        guard !sources.isEmpty else { return }
        try pool.write { db in
            for source in sources {
                try db.execute(sql: "INSERT OR IGNORE INTO salvage (source, copied_through, done) VALUES (?, 0, 1)", arguments: [source])
            }
        }
    }

    /// The damaged files beside the queue (`<path>.corrupt-*`, not their -wal and -shm), oldest first.
    static func damagedFiles(beside path: String) -> [String] {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".corrupt-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        return names.filter { $0.hasPrefix(prefix) && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.sorted()
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    /// Salvages every damaged file beside the queue that is not done yet; the last one's report.
    func salvagePending(logger: Logger, now: Date, step: (QueueRecoveryStep) -> Void) throws -> QueueRecovery? {
        var report: QueueRecovery?
        for aside in Self.damagedFiles(beside: path) {
            let source = (aside as NSString).lastPathComponent
            let done = try pool.read { db in try Bool.fetchOne(db, sql: "SELECT done FROM salvage WHERE source = ?", arguments: [source]) }
            guard done != true else { continue }
            report = try salvage(aside, source: source, now: now, step: step)
            logger.critical(
                "salvaged a damaged queue into this one",
                metadata: [
                    "path": "\(path)", "from": "\(aside)", "salvaged": "\(report?.salvaged ?? 0)",
                    "sequence_floor": "\(report?.sequenceFloor ?? 0)",
                ])
        }
        return report
    }

    /// Copies what reads from the damaged `aside` into this queue, resuming where a cut-short run
    /// stopped: first the sequence floor and the salvage's record, then chunks, then "done".
    private func salvage(_ aside: String, source: String, now: Date, step: (QueueRecoveryStep) -> Void) throws -> QueueRecovery {
        var configuration = Configuration()
        configuration.readonly = true
        let damaged = try? DatabaseQueue(path: aside, configuration: configuration)
        let lastSequence = try? damaged?.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'positions'")
        }
        let highest = try? damaged?.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM positions") }
        // An unreadable sequence: continue from the time in milliseconds, above any count a queue reaches.
        let floor = max(highest.flatMap { $0 } ?? 0, lastSequence.flatMap { $0 } ?? Int64(now.timeIntervalSince1970 * 1000))
        var copiedThrough = try pool.write { db -> Int64 in
            try db.execute(sql: "INSERT OR IGNORE INTO salvage (source, copied_through) VALUES (?, 0)", arguments: [source])
            // sqlite_sequence has no key on name: update its row, or add the first one.
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'positions'", arguments: [floor])
            if db.changesCount == 0 {
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('positions', ?)", arguments: [floor])
            }
            return try Int64.fetchOne(db, sql: "SELECT copied_through FROM salvage WHERE source = ?", arguments: [source]) ?? 0
        }
        step(.floorRecorded)
        var salvaged = 0
        while let damaged {
            let (rows, readThrough) = Self.chunk(of: damaged, after: copiedThrough, path: aside)
            guard let readThrough else { break }  // nothing more reads
            try pool.write { db in
                for row in rows {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO positions (\(PositionRow.rawColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        arguments: StatementArguments(row))
                }
                try db.execute(sql: "UPDATE salvage SET copied_through = ? WHERE source = ?", arguments: [readThrough, source])
                try Self.bump("salvaged", by: rows.count, in: db)
            }
            salvaged += rows.count
            copiedThrough = readThrough
            step(.chunkCopied(through: readThrough))
        }
        try pool.write { db in try db.execute(sql: "UPDATE salvage SET done = 1 WHERE source = ?", arguments: [source]) }
        step(.finished)
        let total = try pool.read { db in try Int.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'salvaged'") } ?? salvaged
        return QueueRecovery(movedTo: aside, reason: "resumed an unfinished salvage", salvaged: total, sequenceFloor: floor)
    }

    /// The next `salvageChunk` rows of the damaged database after sequence `after` that still decode,
    /// and the last sequence read (rows that do not decode are passed over); nil when nothing more
    /// reads (the end, or the first unreadable page).
    static func chunk(of damaged: DatabaseQueue, after: Int64, path: String) -> (rows: [[DatabaseValue]], readThrough: Int64?) {
        var rows: [[DatabaseValue]] = []
        var last: Int64?
        try? damaged.read { db in
            let cursor = try Row.fetchCursor(
                db, sql: "SELECT \(PositionRow.rawColumns) FROM positions WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [after, salvageChunk])
            while let row = try cursor.next() {
                guard let seq = Int64.fromDatabaseValue(row["seq"]) else { continue }
                last = seq
                guard (try? PositionRow.decode(row, path: path)) != nil else { continue }
                rows.append(Array(row.databaseValues))
            }
        }
        return (rows, last)
    }
}
