import Foundation
import TernCore

/// The OsmAnd protocol as Traccar decodes it (`OsmAndProtocolDecoder`, Traccar's port 5055): one
/// position per HTTP request, either as query parameters or as the JSON body of Traccar Client.
public enum OsmAnd {
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// `?id=…&timestamp=…&lat=…&lon=…&speed=…(knots)&bearing=…&altitude=…&accuracy=…&hdop=…`:
        /// every Traccar version decodes it.
        case query
        /// `{"device_id":…,"location":{"timestamp":…,"coords":{…speed (m/s)…}}}` (Traccar Client's).
        case json
    }

    /// Knots in one metre per second (Traccar's `UnitsConverter.knotsFromMps`).
    public static let knotsPerMetrePerSecond = 3600.0 / 1852.0

    /// The query parameters for one position. The time goes out in epoch milliseconds (Traccar takes
    /// a number of 2³¹ or more as milliseconds), so sub-second receivers keep their time.
    public static func queryItems(_ queued: QueuedPosition, device: String) -> [URLQueryItem] {
        let fix = queued.position.fix
        var items = [
            URLQueryItem(name: "id", value: device),
            URLQueryItem(name: "timestamp", value: "\(Int64((fix.time.timeIntervalSince1970 * 1000).rounded()))"),
            URLQueryItem(name: "lat", value: number(fix.coordinate.latitude)),
            URLQueryItem(name: "lon", value: number(fix.coordinate.longitude)),
        ]
        if let speed = fix.speed { items.append(URLQueryItem(name: "speed", value: number(speed * knotsPerMetrePerSecond))) }
        if let course = fix.course { items.append(URLQueryItem(name: "bearing", value: number(course))) }
        if let altitude = fix.altitude { items.append(URLQueryItem(name: "altitude", value: number(altitude))) }
        if let accuracy = fix.accuracy { items.append(URLQueryItem(name: "accuracy", value: number(accuracy))) }
        if let hdop = fix.hdop { items.append(URLQueryItem(name: "hdop", value: number(hdop))) }
        return items
    }

    /// The query string (percent-encoded as Traccar's `QueryStringDecoder` expects).
    public static func query(_ queued: QueuedPosition, device: String) -> String {
        var components = URLComponents()
        components.queryItems = queryItems(queued, device: device)
        // `+` would be read as a space by a form decoder: encode it.
        return (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
    }

    /// Traccar Client's JSON body for one position (speed in m/s, heading in degrees, ISO time).
    public static func json(_ queued: QueuedPosition, device: String) -> Data {
        let fix = queued.position.fix
        var coords: [String: Any] = ["latitude": fix.coordinate.latitude, "longitude": fix.coordinate.longitude]
        if let speed = fix.speed { coords["speed"] = speed }
        if let course = fix.course { coords["heading"] = course }
        if let altitude = fix.altitude { coords["altitude"] = altitude }
        if let accuracy = fix.accuracy { coords["accuracy"] = accuracy }
        let body: [String: Any] = [
            "device_id": device,
            "location": ["timestamp": WireTime.format(fix.time), "coords": coords],
        ]
        return (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(format: "%.1f", value) : "\(value)"
    }
}
