import Foundation
import TernCore

/// Fixture builders: short, readable test data.
extension Fix {
    /// A good 3-D GPS fix at `seconds` after 2026-11-21T00:00:00Z, `metresNorth` of Zagreb.
    public static func fixture(
        seconds: Double = 0, metresNorth: Double = 0, metresEast: Double = 0, accuracy: Double? = 4,
        quality: FixQuality = .gps, speed: Double? = 0, course: Double? = 0
    ) -> Fix {
        let origin = Coordinate(latitude: 45.8150, longitude: 15.9819)
        let north = Geodesy.destination(from: origin, distance: metresNorth, bearing: 0)
        return Fix(
            time: Date(timeIntervalSince1970: 1_795_219_200 + seconds),
            coordinate: Geodesy.destination(from: north, distance: metresEast, bearing: 90),
            altitude: 120, speed: speed, course: course, quality: quality, satellites: 9,
            hdop: accuracy.map { $0 / 4 }, accuracy: accuracy)
    }
}

extension Position {
    public static func fixture(seconds: Double = 0, id: UUID = UUID()) -> Position {
        Position(id: id, fix: .fixture(seconds: seconds))
    }
}
