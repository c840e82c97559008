import Foundation
import GRDB
import GRDBSQLite
import TernCore

/// Maps `Position` to and from a `positions` row. Times are stored as Unix seconds (REAL).
enum PositionRow {
    static let columns = "id, time, lat, lon, alt, speed, course, quality, satellites, hdop, accuracy, enqueued_at"
    /// Every column of a `positions` row, in table order (what `quarantine` copies).
    static let rawColumns = "seq, " + columns

    static func arguments(_ position: Position, enqueuedAt: Date) -> StatementArguments {
        let fix = position.fix
        return [
            position.id.uuidString, fix.time.timeIntervalSince1970,
            fix.coordinate.latitude, fix.coordinate.longitude, fix.altitude, fix.speed, fix.course,
            fix.quality.rawValue, fix.satellites, fix.hdop, fix.accuracy,
            enqueuedAt.timeIntervalSince1970,
        ]
    }

    /// Binds `position` to `statement` (an `INSERT … (columns) VALUES (?×12)`) and steps it, with the
    /// C API: the insert is the queue's hot path, and boxing 12 values into `StatementArguments` per
    /// row cost a quarter of a 100-row group commit's time. Returns the rows changed (0 for a repeat id).
    static func insert(_ position: Position, enqueuedAt: Double, with statement: Statement) throws -> Int {
        let handle = statement.sqliteStatement
        let fix = position.fix
        func bind(_ index: Int32, _ value: Double?) {
            if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
        }
        sqlite3_reset(handle)
        sqlite3_bind_text(handle, 1, position.id.uuidString, -1, transient)
        bind(2, fix.time.timeIntervalSince1970)
        bind(3, fix.coordinate.latitude)
        bind(4, fix.coordinate.longitude)
        bind(5, fix.altitude)
        bind(6, fix.speed)
        bind(7, fix.course)
        sqlite3_bind_int64(handle, 8, Int64(fix.quality.rawValue))
        if let satellites = fix.satellites { sqlite3_bind_int64(handle, 9, Int64(satellites)) } else { sqlite3_bind_null(handle, 9) }
        bind(10, fix.hdop)
        bind(11, fix.accuracy)
        bind(12, enqueuedAt)
        let code = sqlite3_step(handle)
        defer { sqlite3_reset(handle) }
        guard code == SQLITE_DONE else {
            let database = sqlite3_db_handle(handle)
            throw DatabaseError(
                resultCode: ResultCode(rawValue: sqlite3_extended_errcode(database)),
                message: String(cString: sqlite3_errmsg(database)), sql: statement.sql)
        }
        return Int(sqlite3_changes(sqlite3_db_handle(handle)))
    }

    /// SQLITE_TRANSIENT: SQLite copies the bound text.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Decodes a row, or throws `QueueError.corrupt` naming what is wrong with it. Never traps: every
    /// column is read as a database value and converted with a check (GRDB's typed subscripts trap on
    /// NULL or a mismatched type).
    static func decode(_ row: Row, path: String) throws -> QueuedPosition {
        func required<T: DatabaseValueConvertible>(_ column: String, _ type: T.Type) throws -> T {
            guard let value = T.fromDatabaseValue(row[column] as DatabaseValue) else {
                throw QueueError.corrupt(path: path, reason: "row seq=\(row["seq"] as DatabaseValue): \(column) is \(row[column] as DatabaseValue)")
            }
            return value
        }
        func optional<T: DatabaseValueConvertible>(_ column: String, _ type: T.Type) -> T? {
            T.fromDatabaseValue(row[column] as DatabaseValue)
        }
        let idText = try required("id", String.self)
        let qualityValue = try required("quality", Int.self)
        guard let id = UUID(uuidString: idText), let quality = FixQuality(rawValue: qualityValue) else {
            throw QueueError.corrupt(path: path, reason: "invalid row id=\(idText) quality=\(qualityValue)")
        }
        let fix = Fix(
            time: Date(timeIntervalSince1970: try required("time", Double.self)),
            coordinate: Coordinate(latitude: try required("lat", Double.self), longitude: try required("lon", Double.self)),
            altitude: optional("alt", Double.self), speed: optional("speed", Double.self),
            course: optional("course", Double.self), quality: quality, satellites: optional("satellites", Int.self),
            hdop: optional("hdop", Double.self), accuracy: optional("accuracy", Double.self))
        return QueuedPosition(sequence: try required("seq", Int64.self), position: Position(id: id, fix: fix))
    }
}
