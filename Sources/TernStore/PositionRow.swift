import Foundation
import GRDB
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
