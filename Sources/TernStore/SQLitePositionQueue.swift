import Foundation
import GRDB
import Logging
import Synchronization
import TernCore

/// The durable store-and-forward queue: a SQLite database in WAL mode at `path`.
///
/// Durability: the writer runs with `synchronous = FULL` (set after GRDB's WAL setup, which would
/// leave `NORMAL`, and checked at open: the queue refuses to open otherwise), so the WAL is fsynced
/// at every commit and an `enqueue` returns only once its positions survive a power cut. Positions
/// written together (`enqueue(contentsOf:)`) share one transaction and one fsync.
///
/// Bounded (`QueueCapacity`): rows, bytes and age, with an overflow policy; every drop is counted
/// in the `counters` table. A row that no longer decodes is moved to `quarantine` and the queue goes
/// on. On a full disk new positions are refused (`QueueError.diskFull`; the gateway keeps them and
/// retries) and a ballast file beside the database is given up the moment something that frees space
/// (an acknowledgement, a checkpoint) fails for lack of it, so uploads drain the queue (`Ballast`).
public final class SQLitePositionQueue: PositionQueue, Sendable {
    /// Where the database lives.
    public let path: String
    public let options: Options
    /// Drawn once when the database was created (schema v5): scopes this queue's sequence numbers.
    public let queueID: UUID
    let pool: DatabasePool
    let ballast: Ballast
    let logger: Logger
    /// Positions in the table, kept by this (only) writer so capacity checks need no COUNT(*).
    private let depth = Mutex<Int?>(nil)
    /// Why the database was found corrupt while running (`QueueDamage.swift`), or nil.
    let damaged = Mutex<String?>(nil)

    /// Longest `quick_check` at open before it is interrupted (the queue is then opened unchecked).
    public static let quickCheckTimeLimit = Duration.seconds(10)

    /// Opens (creating if needed) the queue at `path`, checks it (`synchronous = FULL`, `quick_check`)
    /// and migrates it to the current schema. Throws `QueueError` (`.corrupt` for a damaged file:
    /// see `openRecovering`).
    public convenience init(path: String, options: Options = Options(), logger: Logger = Logger(label: "tern.queue")) throws {
        try self.init(path: path, options: options, logger: logger, prepare: { _ in })
    }

    /// `prepare` runs on every new connection after Tern's own pragmas (tests use it).
    init(
        path: String, options: Options = Options(), logger: Logger = Logger(label: "tern.queue"),
        prepare: @escaping @Sendable (Database) throws -> Void
    ) throws {
        self.path = path
        self.options = options
        self.logger = logger
        self.ballast = Ballast(path: path + ".ballast", bytes: options.ballastBytes)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let journalSizeLimit = options.journalSizeLimit
        let pageSize = options.pageSize
        configuration.prepareDatabase { db in
            // Before GRDB turns on WAL: only a new, empty database takes it.
            try db.execute(sql: "PRAGMA page_size = \(pageSize)")
            try db.execute(sql: "PRAGMA journal_size_limit = \(journalSizeLimit)")
            try prepare(db)
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.setSynchronous(options.synchronous, on: pool, path: path)
            try Self.quickCheck(pool, path: path)
            let applied = try pool.read { db in try Schema.migrator.appliedIdentifiers(db) }
            try Schema.migrator.migrate(pool)
            if !applied.isEmpty && !applied.contains("v4") { try Self.markSalvagedBeforeV4(path: path, pool: pool) }
            queueID = try Self.readQueueID(pool, path: path)
        } catch {
            throw QueueError.map(error, path: path)
        }
        ballast.reserve()
    }

    /// The identity the v5 migration drew.
    private static func readQueueID(_ pool: DatabasePool, path: String) throws -> UUID {
        let text = try pool.read { db in try String.fetchOne(db, sql: "SELECT queue_id FROM identity WHERE id = 1") }
        guard let text, let id = UUID(uuidString: text) else {
            throw QueueError.corrupt(path: path, reason: "the identity table holds no queue id (\(text ?? "no row"))")
        }
        return id
    }

    /// GRDB switches the writer to WAL with `synchronous = NORMAL` after `prepareDatabase`: set the
    /// mode on the (single) writer connection afterwards, and read it back.
    private static func setSynchronous(_ mode: Options.Synchronous, on pool: DatabasePool, path: String) throws {
        let reported = try pool.writeWithoutTransaction { db -> Int? in
            try db.execute(sql: "PRAGMA synchronous = \(mode.rawValue)")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        let expected = mode == .full ? 2 : 1
        guard reported == expected else {
            throw QueueError.database(
                path: path,
                reason: "SQLite reports synchronous = \(reported.map(String.init) ?? "nothing") after setting \(mode.rawValue) "
                    + "(\(expected)): commits would not be durable; Tern refuses to run on it")
        }
    }

    /// `PRAGMA quick_check`, interrupted after `quickCheckTimeLimit` (a huge queue on a slow card).
    private static func quickCheck(_ pool: DatabasePool, path: String) throws {
        let watchdog = DispatchWorkItem { pool.interrupt() }
        DispatchQueue.global().asyncAfter(deadline: .now() + quickCheckTimeLimit.seconds, execute: watchdog)
        defer { watchdog.cancel() }
        let result: [String]
        do {
            result = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(5)") }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            return
        }
        guard result == ["ok"] else {
            throw QueueError.corrupt(path: path, reason: "quick_check: " + result.joined(separator: "; "))
        }
    }

    /// The `synchronous` mode the writer connection reports: 2 is FULL.
    public func synchronousMode() async throws -> Int {
        try await pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// Stores `position` durably and returns its sequence number. A position whose id is still
    /// queued is not stored twice: its existing sequence number is returned. Throws
    /// `QueueError.capacityReached` when a `reject-new` queue is full.
    @discardableResult
    public func enqueue(_ position: Position) async throws -> Int64 {
        let id = position.id.uuidString
        // The sequence number is read in the write's own transaction: read afterwards, the position
        // may already have been uploaded and acknowledged (deleted), and a stored position would be
        // reported as refused.
        let (result, seq) = try await store([position]) { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM positions WHERE id = ?", arguments: [id])
        }
        guard result.stored == 1 || result.dropped.rejectedNew == 0, let seq else { throw QueueError.capacityReached(path: path) }
        return seq
    }

    /// Stores positions in one transaction (one fsync), applying the capacity rules in it.
    /// Once the database was found corrupt, positions go to the spill file instead (fsynced: as
    /// durable), until the restart salvages both (`QueueDamage.swift`).
    public func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult {
        guard !positions.isEmpty else { return EnqueueResult(stored: 0) }
        if damage != nil { return try spill(positions) }
        do {
            return try await store(positions) { _ in () }.result
        } catch QueueError.corrupt {
            return try spill(positions)
        }
    }

    /// Stores `positions` in one transaction, applying the capacity rules, and runs `then` in the
    /// same transaction.
    private func store<T: Sendable>(
        _ positions: [Position], then: @escaping @Sendable (Database) throws -> T
    ) async throws -> (result: EnqueueResult, then: T) {
        let now = Date()
        let enqueuedAt = now.timeIntervalSince1970
        let capacity = options.capacity
        // Not `writeFreeingBallast`: on a full disk new positions wait (in the gateway's memory); the
        // ballast is kept for what frees space (acknowledgements, checkpoints).
        let (result, extra) = try await write { db in
            var depth = try self.currentDepth(db)
            var result = EnqueueResult(stored: 0)
            if let maxAge = capacity.maxAge {
                try db.execute(
                    sql: "DELETE FROM positions WHERE enqueued_at < ?", arguments: [now.timeIntervalSince1970 - maxAge.seconds])
                result.dropped.expired = db.changesCount
                depth -= db.changesCount
            }
            let insert = try db.cachedStatement(sql: Self.insert)
            for position in positions {
                if capacity.overflow == .rejectNew, try depth >= capacity.maxPositions || Self.mayExceed(capacity.maxBytes, depth: depth, db) {
                    result.dropped.rejectedNew += 1
                    continue
                }
                let changed = try PositionRow.insert(position, enqueuedAt: enqueuedAt, with: insert)
                depth += changed
                result.stored += changed
            }
            if capacity.overflow != .rejectNew { try Self.makeRoom(db, depth: &depth, capacity: capacity, dropped: &result.dropped) }
            try Self.count(result.dropped, in: db)
            self.depth.withLock { $0 = depth }
            return (result, try then(db))
        }
        ballast.restoreIfRoom()
        return (result, extra)
    }

    public func oldest(limit: Int) async throws -> [QueuedPosition] {
        let path = path
        while true {
            let (good, bad) = try await read { db in
                var good: [QueuedPosition] = []
                var bad: [(seq: Int64, reason: String)] = []
                let rows = try Row.fetchCursor(db, sql: "SELECT * FROM positions ORDER BY seq LIMIT ?", arguments: [max(0, limit)])
                while let row = try rows.next() {
                    do { good.append(try PositionRow.decode(row, path: path)) } catch {
                        bad.append((Int64.fromDatabaseValue(row["seq"]) ?? -1, "\(error)"))
                    }
                }
                return (good, bad)
            }
            guard !bad.isEmpty else { return good }
            try await quarantine(bad)
        }
    }

    /// Moves undecodable rows out of the uploader's way, into `quarantine` (kept, counted, exportable).
    private func quarantine(_ rows: [(seq: Int64, reason: String)]) async throws {
        let now = Date().timeIntervalSince1970
        let moved = try await writeFreeingBallast { db -> Int in
            for (seq, reason) in rows {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO quarantine SELECT \(PositionRow.rawColumns), ?, ? FROM positions WHERE seq = ?",
                    arguments: [reason, now, seq])
                try db.execute(sql: "DELETE FROM positions WHERE seq = ?", arguments: [seq])
            }
            try Self.bump("quarantined", by: rows.count, in: db)
            self.depth.withLock { $0 = $0.map { $0 - rows.count } }
            return rows.count
        }
        logger.error(
            "moved undecodable positions to the quarantine table; the queue goes on (export them with `tern queue export --quarantine`)",
            metadata: ["count": "\(moved)", "path": "\(path)", "reasons": "\(rows.map(\.reason))"])
    }

    /// Deletes what the server confirmed. Not fsynced (`synchronous = NORMAL` for this transaction):
    /// a power cut can undo the delete, and the positions then go again, which the server drops by
    /// their ids; every stored position stays stored, since the next store's fsync covers the WAL up to
    /// it (and a torn, unsynced tail is discarded by the WAL's checksums). One fsync and its WAL page
    /// less per upload (docs/durability.md, "SD card wear"). Except with the `reject-new` overflow policy: there a
    /// delete undone by a power cut would bring delivered rows back and could make a full queue refuse
    /// new positions, so acknowledgements are fsynced like stores.
    public func acknowledge(through sequence: Int64) async throws {
        try await writeFreeingBallast(synced: options.capacity.overflow == .rejectNew) { db in
            try db.execute(sql: "DELETE FROM positions WHERE seq <= ?", arguments: [sequence])
            let deleted = db.changesCount
            self.depth.withLock { $0 = $0.map { $0 - deleted } }
        }
    }

    public func newest() async throws -> QueuedPosition? {
        let path = path
        return try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM positions ORDER BY seq DESC LIMIT 1").flatMap { try? PositionRow.decode($0, path: path) }
        }
    }

    /// Deletes one position the server confirmed; not fsynced, as `acknowledge(through:)`.
    public func remove(sequence: Int64) async throws {
        try await writeFreeingBallast(synced: false) { db in
            try db.execute(sql: "DELETE FROM positions WHERE seq = ?", arguments: [sequence])
            let deleted = db.changesCount
            self.depth.withLock { $0 = $0.map { $0 - deleted } }
        }
    }

    /// Moves a position the server refuses for good to the quarantine table (kept, counted, exportable).
    public func quarantine(sequence: Int64, reason: String) async throws {
        try await quarantine([(sequence, reason)])
    }

    public func count() async throws -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM positions") ?? 0 }
    }

    /// Housekeeping, every few minutes: a passive checkpoint (the WAL back into the database, then cut
    /// to `journalSizeLimit`), positions past the maximum age dropped, the ballast restored when
    /// space has returned.
    @discardableResult
    public func maintain() async throws -> QueueDrops {
        var dropped = QueueDrops()
        if let maxAge = options.capacity.maxAge {
            let cutoff = Date().timeIntervalSince1970 - maxAge.seconds
            dropped.expired = try await writeFreeingBallast { db in
                try db.execute(sql: "DELETE FROM positions WHERE enqueued_at < ?", arguments: [cutoff])
                let expired = db.changesCount
                try Self.count(QueueDrops(expired: expired), in: db)
                self.depth.withLock { $0 = $0.map { $0 - expired } }
                return expired
            }
        }
        do {
            try await checkpoint()
        } catch QueueError.diskFull where ballast.release() {
            logger.critical("disk full: released the queue's ballast so the checkpoint can run", metadata: ["path": "\(path)"])
            try await checkpoint()
        }
        ballast.restoreIfRoom()
        return dropped
    }

    /// Depth, oldest fix time, last assigned sequence number, drops and quarantine.
    public func stats() async throws -> QueueStats {
        try await read { db in try QueueStats.read(db) }
    }

    // MARK: - Capacity

    private func currentDepth(_ db: Database) throws -> Int {
        if let known = depth.withLock({ $0 }) { return known }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM positions") ?? 0
    }

    static let insert =
        "INSERT INTO positions (\(PositionRow.columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"

    /// Most bytes of pages one queued position can take (its row, its id index entry, half-empty
    /// pages and the b-tree's interior pages): about 170 B measured, 512 B assumed.
    static let maxBytesPerPosition = 512

    /// Whether the pages may exceed `maxBytes`: not with too few positions to fill them (no query),
    /// else the file's pages (one pragma), and only then the free pages.
    static func mayExceed(_ maxBytes: Int, depth: Int, _ db: Database) throws -> Bool {
        guard depth * maxBytesPerPosition + (64 << 10) > maxBytes else { return false }
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        guard pages * size > maxBytes else { return false }
        return try usedBytes(db) > maxBytes
    }

    /// Bytes in use by the database's pages (free pages not counted).
    static func usedBytes(_ db: Database) throws -> Int {
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * size
    }

    /// Drops queued positions until the queue is within `capacity` (drop-oldest or thin-oldest).
    private static func makeRoom(_ db: Database, depth: inout Int, capacity: QueueCapacity, dropped: inout QueueDrops) throws {
        var excess = depth - capacity.maxPositions
        for _ in 0..<64 {
            if excess <= 0 {
                guard depth > 0, try mayExceed(capacity.maxBytes, depth: depth, db) else { return }
                let used = try usedBytes(db)
                // Rows to free, from the average row's share of the pages (at least one, at most a tenth).
                excess = min(max(1, (used - capacity.maxBytes) * depth / max(1, used)), max(1, depth / 10))
            }
            let removed = capacity.overflow == .thinOldest ? try thin(db, count: excess) : try dropOldest(db, count: excess)
            if capacity.overflow == .thinOldest { dropped.thinned += removed } else { dropped.oldest += removed }
            depth -= removed
            guard removed > 0 else { return }
            excess = depth - capacity.maxPositions
        }
    }

    private static func dropOldest(_ db: Database, count: Int) throws -> Int {
        try db.execute(sql: "DELETE FROM positions WHERE seq IN (SELECT seq FROM positions ORDER BY seq LIMIT ?)", arguments: [count])
        return db.changesCount
    }

    /// Every other position of the oldest `2 × count`, keeping the first: the old track at half density.
    private static func thin(_ db: Database, count: Int) throws -> Int {
        let oldest = try Int64.fetchAll(db, sql: "SELECT seq FROM positions ORDER BY seq LIMIT ?", arguments: [2 * count])
        guard oldest.count >= 2 else { return try dropOldest(db, count: count) }
        let victims = stride(from: 1, to: oldest.count, by: 2).map { oldest[$0] }
        for seq in victims { try db.execute(sql: "DELETE FROM positions WHERE seq = ?", arguments: [seq]) }
        return victims.count
    }

    private static func count(_ dropped: QueueDrops, in db: Database) throws {
        try bump("dropped_oldest", by: dropped.oldest, in: db)
        try bump("thinned", by: dropped.thinned, in: db)
        try bump("rejected_new", by: dropped.rejectedNew, in: db)
        try bump("expired", by: dropped.expired, in: db)
    }

    static func bump(_ name: String, by value: Int, in db: Database) throws {
        guard value != 0 else { return }
        try db.execute(
            sql: "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            arguments: [name, value])
    }

    // MARK: - Access

    /// A write that frees space (acknowledgement, quarantine, expiry); on a full disk the ballast is
    /// given up, the WAL checkpointed, and the write tried once more.
    func writeFreeingBallast<T: Sendable>(synced: Bool = true, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await write(synced: synced, body)
        } catch QueueError.diskFull where ballast.release() {
            logger.critical(
                "disk full: released the queue's ballast so checkpoints and acknowledgements can run; free space on the data directory's file system",
                metadata: ["path": "\(path)", "ballast_bytes": "\(ballast.bytes)"])
            // Back into the database file with the room the ballast gave: the WAL then restarts from its
            // beginning and later writes reuse its space instead of growing it.
            try? await checkpoint()
            return try await write(synced: synced, body)
        } catch {
            if case QueueError.diskFull = error { depth.withLock { $0 = nil } }
            throw error
        }
    }

    /// A passive checkpoint: the WAL's pages into the database file, without waiting for readers.
    func checkpoint() async throws {
        do { try await pool.writeWithoutTransaction { db in try db.checkpoint(.passive) } } catch {
            throw noted(QueueError.map(error, path: path))
        }
    }

    /// One transaction on the writer. `synced: false` commits it without an fsync (`synchronous =
    /// NORMAL`), for writes whose loss in a power cut costs nothing stored (acknowledgements); every
    /// write sets its mode first, so an unsynced one never carries over to a store.
    func write<T: Sendable>(synced: Bool = true, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let mode = synced ? options.synchronous : .normal
        let configured = options.synchronous
        do {
            return try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(mode.rawValue)")
                defer { if mode != configured { try? db.execute(sql: "PRAGMA synchronous = \(configured.rawValue)") } }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw QueueError.database(path: self.path, reason: "a transaction committed without a result") }
                return result
            }
        } catch {
            // A failed transaction rolled back: the cached depth may be off.
            depth.withLock { $0 = nil }
            throw noted(QueueError.map(error, path: path))
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await pool.read(body) } catch { throw noted(QueueError.map(error, path: path)) }
    }

    /// A corruption found while running marks the queue damaged (`noteDamage`).
    private func noted(_ error: QueueError) -> QueueError {
        if case let .corrupt(_, reason) = error { noteDamage(reason) }
        return error
    }
}
