import Foundation
import TernCore

/// One position as an OwnTracks `location` message, the JSON the OwnTracks apps publish and the
/// OwnTracks Recorder (and Home Assistant, PhoneTrack, Traccar's OwnTracks port, …) understand.
///
/// ```json
/// {"_type":"location","acc":4,"alt":121,"cog":87,"created_at":1795000042,"lat":45.81,"lon":15.97,
///  "tern_id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","tid":"01","tst":1795000001,"vel":5}
/// ```
/// Following the OwnTracks JSON conventions: `tst` is the fix time and `created_at` the time the
/// message was made, both integer Unix seconds (the fix time is truncated, as the apps do); `acc`
/// (horizontal accuracy), `vac` (vertical accuracy) and `alt` (above mean sea level) are integer metres;
/// `vel` is integer km/h and `cog` integer degrees (0–359); `lat` and `lon` are decimal degrees.
/// Unknown values are left out rather than sent as 0 (`batt` is always out: Tern does not know a
/// battery level). `tern_id` is the position's id, the same on every retry, so a receiver can drop a
/// repeat; OwnTracks consumers ignore keys they do not know.
public struct OwnTracksLocation: Sendable, Hashable, Codable {
    public var type = "location"
    public var tid: String
    public var tst: Int64
    public var lat: Double
    public var lon: Double
    public var acc: Int?
    public var vac: Int?
    public var alt: Int?
    public var vel: Int?
    public var cog: Int?
    public var batt: Int?
    public var createdAt: Int64
    public var ternID: String

    enum CodingKeys: String, CodingKey {
        case type = "_type"
        case tid, tst, lat, lon, acc, vac, alt, vel, cog, batt
        case createdAt = "created_at"
        case ternID = "tern_id"
    }

    /// The message for `queued`, made at `createdAt`, shown on maps with the initials `trackerID`.
    public init(_ queued: QueuedPosition, trackerID: OwnTracksTrackerID, createdAt: Date) {
        let fix = queued.position.fix
        tid = trackerID.value
        tst = Self.unixSeconds(fix.time)
        lat = fix.coordinate.latitude
        lon = fix.coordinate.longitude
        acc = Self.wholeNumber(fix.accuracy)
        vac = Self.wholeNumber(fix.errorEstimate?.altitude)
        alt = Self.wholeNumber(fix.altitude)
        vel = Self.wholeNumber(fix.speed.map { $0 * 3.6 })
        cog = Self.wholeNumber(fix.course).map { ($0 % 360 + 360) % 360 }
        batt = nil
        self.createdAt = Self.unixSeconds(createdAt)
        ternID = queued.position.id.uuidString
    }

    /// The UTF-8 JSON bytes, keys sorted (so `_type` comes first). Throws `OwnTracksEncodingError`
    /// when the position cannot be written as JSON (a latitude or longitude that is not a number).
    public func encoded() throws(OwnTracksEncodingError) -> [UInt8] {
        guard lat.isFinite, lon.isFinite else {
            throw OwnTracksEncodingError(ternID: ternID, reason: "latitude \(lat) or longitude \(lon) is not a finite number")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw OwnTracksEncodingError(ternID: ternID, reason: "\(error)")
        }
    }

    /// Whole seconds since 1970, rounded down (a fix at 12:00:00.9 is 12:00:00).
    static func unixSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return Int64(exactly: seconds) ?? 0
    }

    /// Rounded to the nearest whole number (halves away from zero); nil for unknown or non-finite values.
    static func wholeNumber(_ value: Double?) -> Int? {
        guard let value, value.isFinite, abs(value) < 1e15 else { return nil }
        return Int(value.rounded())
    }
}

/// A position that cannot be written as an OwnTracks message.
public struct OwnTracksEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var ternID: String
    public var reason: String

    public var description: String {
        "position \(ternID) cannot be written as OwnTracks JSON: \(reason) (the receiver reported a bad value; the position is skipped)"
    }
}

/// The OwnTracks tracker id (`tid`): the one or two characters a map shows for the device.
public struct OwnTracksTrackerID: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    /// `configured` when set (`uplink.tracker_id`), else the device name's last two letters or digits,
    /// as the OwnTracks apps take the last two characters of theirs (`pi-gps-01` → `01`).
    public init(configured: String?, device: String) throws(UplinkConfigError) {
        if let configured, !configured.isEmpty {
            guard (1...2).contains(configured.count), !configured.contains(where: { $0.isWhitespace || $0.isNewline })
            else {
                throw UplinkConfigError(
                    key: "uplink.tracker_id", found: configured,
                    expected: "one or two characters without spaces, e.g. \"P1\" (OwnTracks shows them on the map)")
            }
            value = configured
        } else {
            let alphanumerics = device.filter { $0.isLetter || $0.isNumber }
            value = alphanumerics.isEmpty ? "TN" : String(alphanumerics.suffix(2))
        }
    }

    public var description: String { value }
}
