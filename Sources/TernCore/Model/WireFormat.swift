import Foundation

/// The JSON body Tern POSTs to the server: one batch of positions, oldest first.
///
/// ```json
/// {"device":"tern-01","queue":"0E8C…","positions":[{"id":"6F9619FF-…","seq":12,"time":"2026-11-21T02:30:00.000Z",
///   "lat":45.81,"lon":15.97,"alt":120.5,"speed":1.2,"course":87.0,"quality":1,
///   "satellites":9,"hdop":0.9,"accuracy":3.6}]}
/// ```
/// `id` is stable across retries: the server must treat a repeated `id` as the same position.
/// `queue` names the queue that numbered `seq` (drawn when it was created): a device whose queue
/// was created afresh numbers from 1 again, under another `queue` (absent from Tern before 0.9).
public struct WireBatch: Sendable, Hashable, Codable {
    public var device: String
    public var queue: UUID?
    public var positions: [WirePosition]

    public init(device: String, queue: UUID? = nil, positions: [WirePosition]) {
        self.device = device
        self.queue = queue
        self.positions = positions
    }

    public init(device: String, queue: UUID? = nil, queued: [QueuedPosition]) {
        self.init(device: device, queue: queue, positions: queued.map(WirePosition.init))
    }

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(WireTime.format(date))
        }
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = WireTime.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO-8601 UTC time, got \(text)")
            }
            return date
        }
        return decoder
    }
}

public struct WirePosition: Sendable, Hashable, Codable {
    public var id: UUID
    public var seq: Int64
    public var time: Date
    public var lat: Double
    public var lon: Double
    public var alt: Double?
    public var speed: Double?
    public var course: Double?
    public var quality: Int
    public var satellites: Int?
    public var hdop: Double?
    public var accuracy: Double?

    public init(_ queued: QueuedPosition) {
        let fix = queued.position.fix
        id = queued.position.id
        seq = queued.sequence
        time = fix.time
        lat = fix.coordinate.latitude
        lon = fix.coordinate.longitude
        alt = fix.altitude
        speed = fix.speed
        course = fix.course
        quality = fix.quality.rawValue
        satellites = fix.satellites
        hdop = fix.hdop
        accuracy = fix.accuracy
    }
}

/// ISO-8601 UTC with milliseconds, e.g. `2026-11-21T02:30:00.000Z`.
public enum WireTime {
    /// `2026-11-21T02:30:00.123Z`, rounded to the millisecond (Foundation's formatter truncates, and a
    /// receiver's `.997` is 0.99699… as a binary fraction: it would print `.996`).
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, millis) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let text = Date(timeIntervalSince1970: Double(wholeSeconds))
            .formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
        let padded = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return text.dropLast() + ".\(padded)Z"
    }

    public static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) {
            return date
        }
        return try? Date(text, strategy: .iso8601)
    }
}
