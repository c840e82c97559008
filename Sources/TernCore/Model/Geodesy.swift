import Foundation

/// Great-circle geometry on a spherical Earth (mean radius), good to ~0.5 % — plenty for filtering.
public enum Geodesy {
    public static let earthRadius = 6_371_008.8

    /// Distance in metres between two coordinates (haversine).
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let φ1 = a.latitude * .pi / 180, φ2 = b.latitude * .pi / 180
        let dφ = φ2 - φ1
        let dλ = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }

    /// Initial bearing from `a` to `b`, degrees true in [0, 360).
    public static func bearing(from a: Coordinate, to b: Coordinate) -> Double {
        let φ1 = a.latitude * .pi / 180, φ2 = b.latitude * .pi / 180
        let dλ = (b.longitude - a.longitude) * .pi / 180
        let y = sin(dλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(dλ)
        let θ = atan2(y, x) * 180 / .pi
        return (θ + 360).truncatingRemainder(dividingBy: 360)
    }

    /// The point `distance` metres from `origin` along `bearing` degrees true.
    public static func destination(from origin: Coordinate, distance: Double, bearing: Double) -> Coordinate {
        let δ = distance / earthRadius
        let θ = bearing * .pi / 180
        let φ1 = origin.latitude * .pi / 180, λ1 = origin.longitude * .pi / 180
        let φ2 = asin(sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sin(φ2))
        var longitude = λ2 * 180 / .pi
        longitude = (longitude + 540).truncatingRemainder(dividingBy: 360) - 180
        return Coordinate(latitude: φ2 * 180 / .pi, longitude: longitude)
    }

    /// Linear interpolation between two coordinates (fine over the short legs between fixes).
    public static func interpolate(_ a: Coordinate, _ b: Coordinate, fraction t: Double) -> Coordinate {
        Coordinate(
            latitude: a.latitude + (b.latitude - a.latitude) * t,
            longitude: a.longitude + (b.longitude - a.longitude) * t)
    }
}
