import ArgumentParser
import Foundation
import GRDBSQLite
import TernCore
import TernStore

/// `tern-bench queue`: what durability costs, on the file system the queue lives on.
struct QueueBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Durable enqueue, read + acknowledge, bytes written, size and quick_check of the SQLite queue.",
        discussion: """
            In a fresh directory under --dir (on the file system being measured): durable enqueue rows/s \
            through SQLitePositionQueue (WAL, synchronous = FULL, group commits of 1, 10 and 100 positions) \
            against the raw SQLite C API doing the same inserts into the same schema with the same pragmas \
            (--runs alternating runs of each into fresh files, medians; the ratio comes from one run); bytes written to storage per position (write_bytes of \
            /proc/self/io around each run); batch read + acknowledge rows/s (batches of 100, as the \
            uploader does); database size per 100,000 positions; and the time of PRAGMA quick_check on a \
            queue of --big-mb MB (what opening a big queue costs at start). Prints one JSON object.
            """)

    @Option(help: "Directory on the file system to measure (a temporary directory is made inside it).")
    var dir = FileManager.default.currentDirectoryPath

    @Option(help: "Positions per run at 1 position per commit (10× at 10, 40× at 100).")
    var rows = 400

    @Option(help: "Runs of each writer at each group size (alternating; medians reported).")
    var runs = 7

    @Option(help: "Size of the queue quick_check is timed on, MB.")
    var bigMb = 100

    func run() async throws {
        let work = (dir as NSString).appendingPathComponent("tern-bench-queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        var enqueue: [[String: Any]] = []
        for (perCommit, count) in [(1, rows), (10, rows * 10), (100, rows * 40)] {
            let positions = Self.positions(count)
            // Alternating runs into fresh files, medians: fsync latency drifts, and both writers see the same drift.
            var tern: [Measurement] = [], raw: [Measurement] = []
            for run in 0..<runs {
                tern.append(try await Self.measure { try await Self.ternEnqueue(positions, perCommit: perCommit, path: "\(work)/tern-\(perCommit)-\(run).sqlite") })
                raw.append(try await Self.measure { try Self.rawEnqueue(positions, perCommit: perCommit, path: "\(work)/raw-\(perCommit)-\(run).sqlite") })
            }
            let ternSeconds = Statistics.median(tern.map(\.seconds)), rawSeconds = Statistics.median(raw.map(\.seconds))
            enqueue.append([
                "positions_per_commit": perCommit, "positions": count, "runs": runs,
                "tern_rows_per_s": Self.round(Double(count) / ternSeconds), "raw_sqlite_rows_per_s": Self.round(Double(count) / rawSeconds),
                "tern_over_raw": Self.round(rawSeconds / ternSeconds, 3),
                "tern_bytes_written_per_position": Int(Statistics.median(tern.map { Double($0.bytesWritten) })) / count,
                "raw_bytes_written_per_position": Int(Statistics.median(raw.map { Double($0.bytesWritten) })) / count,
            ])
        }

        // Read + acknowledge, 100 at a time, from a queue of rows × 40 positions.
        let drainPath = "\(work)/drain.sqlite"
        let drainCount = rows * 40
        let queue = try SQLitePositionQueue(path: drainPath, options: .init(ballastBytes: 0))
        for chunk in Self.positions(drainCount).chunked(100) { _ = try await queue.enqueue(contentsOf: chunk) }
        let drain = try await Self.measure {
            while let last = try await queue.oldest(limit: 100).last { try await queue.acknowledge(through: last.sequence) }
        }

        // Size per 100,000 positions, checkpointed.
        let sizePath = "\(work)/size.sqlite"
        let sized = try SQLitePositionQueue(path: sizePath, options: .init(ballastBytes: 0))
        for chunk in Self.positions(100_000).chunked(1000) { _ = try await sized.enqueue(contentsOf: chunk) }
        try Self.truncateWAL(sizePath)
        let bytesPer100k = try FileManager.default.attributesOfItem(atPath: sizePath)[.size] as? Int ?? 0

        // quick_check on a big queue.
        let bigPath = "\(work)/big.sqlite"
        let bigRows = bigMb * 1_000_000 * 100_000 / max(1, bytesPer100k)
        try Self.rawEnqueue(Self.positions(bigRows), perCommit: 10_000, path: bigPath)
        let bigBytes = try FileManager.default.attributesOfItem(atPath: bigPath)[.size] as? Int ?? 0
        let clock = ContinuousClock()
        let checkStart = clock.now
        let check = try QueueReader(path: bigPath).quickCheck()
        let checkSeconds = (clock.now - checkStart).seconds

        let report: [String: Any] = [
            "benchmark": "queue", "file_system": Self.fileSystem(of: work), "sqlite": String(cString: sqlite3_libversion()),
            "machine": ["os": Self.osName(), "cores": ProcessInfo.processInfo.activeProcessorCount],
            "enqueue": enqueue,
            "read_ack": ["positions": drainCount, "batch": 100, "rows_per_s": Self.round(Double(drainCount) / drain.seconds)],
            "bytes_per_100k_positions": bytesPer100k,
            "quick_check": ["database_mb": Self.round(Double(bigBytes) / 1e6, 1), "positions": bigRows, "seconds": Self.round(checkSeconds, 3), "result": check.joined(separator: "; ")],
        ]
        let json = try JSONOutput.data(report)
        print(String(decoding: json, as: UTF8.self))
    }

    // MARK: - The two writers

    static func ternEnqueue(_ positions: [Position], perCommit: Int, path: String) async throws {
        let queue = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0))
        for chunk in positions.chunked(perCommit) { _ = try await queue.enqueue(contentsOf: chunk) }
    }

    /// The same inserts with the C API: same schema (Tern's, created by opening the queue once), WAL,
    /// synchronous = FULL, one transaction per `perCommit` positions, a prepared statement.
    static func rawEnqueue(_ positions: [Position], perCommit: Int, path: String) throws {
        _ = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0))  // the schema
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw ValidationError("cannot open \(path)") }
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw ValidationError(String(cString: sqlite3_errmsg(db))) }
        }
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 4194304")
        var statement: OpaquePointer?
        let sql = "INSERT INTO positions (id, time, lat, lon, alt, speed, course, quality, satellites, hdop, accuracy, enqueued_at) "
            + "VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw ValidationError("prepare failed") }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let now = Date().timeIntervalSince1970
        for chunk in positions.chunked(perCommit) {
            try exec("BEGIN")
            for position in chunk {
                let fix = position.fix
                sqlite3_bind_text(statement, 1, position.id.uuidString, -1, transient)
                sqlite3_bind_double(statement, 2, fix.time.timeIntervalSince1970)
                sqlite3_bind_double(statement, 3, fix.coordinate.latitude)
                sqlite3_bind_double(statement, 4, fix.coordinate.longitude)
                for (index, value) in [(5, fix.altitude), (6, fix.speed), (7, fix.course)] {
                    if let value { sqlite3_bind_double(statement, Int32(index), value) } else { sqlite3_bind_null(statement, Int32(index)) }
                }
                sqlite3_bind_int(statement, 8, Int32(fix.quality.rawValue))
                sqlite3_bind_int(statement, 9, Int32(fix.satellites ?? 0))
                sqlite3_bind_double(statement, 10, fix.hdop ?? 0)
                sqlite3_bind_double(statement, 11, fix.accuracy ?? 0)
                sqlite3_bind_double(statement, 12, now)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw ValidationError(String(cString: sqlite3_errmsg(db))) }
                sqlite3_reset(statement)
            }
            try exec("COMMIT")
        }
    }

    // MARK: - Measuring

    struct Measurement {
        var seconds: Double
        /// Bytes this process caused to be written to storage (`write_bytes` of /proc/self/io).
        var bytesWritten: Int
    }

    static func measure(_ body: () async throws -> Void) async throws -> Measurement {
        let clock = ContinuousClock()
        let bytes = writeBytes()
        let start = clock.now
        try await body()
        return Measurement(seconds: (clock.now - start).seconds, bytesWritten: writeBytes() - bytes)
    }

    static func writeBytes() -> Int { ProcessIO.ofSelf?.writeBytes ?? 0 }

    static func truncateWAL(_ path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { return }
        defer { sqlite3_close(db) }
        sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
    }

    static func positions(_ count: Int) -> [Position] {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        return (0..<count).map { i in
            var fix = Fix(
                time: start.addingTimeInterval(Double(i)), coordinate: Coordinate(latitude: 45.8 + Double(i) * 1e-5, longitude: 15.97),
                altitude: 120.5, speed: 1.25, course: 87, quality: .gps, satellites: 9, hdop: 0.9, accuracy: 3.6)
            fix.mode = .threeD
            return Position(fix: fix)
        }
    }

    static func fileSystem(of path: String) -> String {
        mountedFileSystem(of: path).map { "\($0.type) on \($0.point)" } ?? "?"
    }

    static func osName() -> String {
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        return release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst(12)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "?"
    }

    static func round(_ value: Double, _ places: Int = 0) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(1, size)).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
