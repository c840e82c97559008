import Foundation
import GRDB
import TernCore

/// Maps `Position` to and from a `positions` row. Times are stored as Unix seconds (REAL).
enum PositionRow {
    static let columns = "id, time, lat, lon, alt, speed, course, quality, satellites, hdop, accuracy, enqueued_at"

    static func arguments(_ position: Position, enqueuedAt: Date) -> StatementArguments {
        let fix = position.fix
        return [
            position.id.uuidString, fix.time.timeIntervalSince1970,
            fix.coordinate.latitude, fix.coordinate.longitude, fix.altitude, fix.speed, fix.course,
            fix.quality.rawValue, fix.satellites, fix.hdop, fix.accuracy,
            enqueuedAt.timeIntervalSince1970,
        ]
    }

    static func decode(_ row: Row, path: String) throws -> QueuedPosition {
        let idText: String = row["id"]
        let qualityValue: Int = row["quality"]
        guard let id = UUID(uuidString: idText), let quality = FixQuality(rawValue: qualityValue) else {
            throw QueueError.corrupt(path: path, reason: "invalid row id=\(idText) quality=\(qualityValue)")
        }
        let fix = Fix(
            time: Date(timeIntervalSince1970: row["time"]),
            coordinate: Coordinate(latitude: row["lat"], longitude: row["lon"]),
            altitude: row["alt"], speed: row["speed"], course: row["course"], quality: quality,
            satellites: row["satellites"], hdop: row["hdop"], accuracy: row["accuracy"])
        return QueuedPosition(sequence: row["seq"], position: Position(id: id, fix: fix))
    }
}
