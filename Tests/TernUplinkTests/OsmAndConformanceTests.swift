import Foundation
import Testing
import TernCore
import TernTesting
@testable import TernUplink

/// What Traccar's `OsmAndProtocolDecoder` makes of a request, written from its rules (see
/// `Vectors/README.md`): checked against Traccar's own test vectors, then used on Tern's requests.
struct OsmAndReferenceDecoder {
    struct Decoded: Equatable {
        var device: String?
        var time: Date?
        var lat: Double?
        var lon: Double?
        var speedKnots: Double?
        var course: Double?
        var altitude: Double?
        var accuracy: Double?
        var hdop: Double?
        var battery: Double?
    }

    /// Minimum accuracy Traccar keeps from the JSON form (`osmand.minAccuracy`, default 10 m).
    static let minAccuracy = 10.0

    /// The query/form variant.
    static func decode(query: String) -> Decoded? {
        var params: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            let key = parts[0].removingPercentEncoding ?? parts[0]
            let value = (parts.count > 1 ? parts[1] : "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            if params[key] == nil { params[key] = value }
        }
        guard let device = params["id"] ?? params["deviceid"] else { return nil }
        var result = Decoded(device: device)
        if let text = params["timestamp"] {
            if let number = Int64(text) {
                result.time = Date(timeIntervalSince1970: number >= Int64(Int32.max) ? Double(number) / 1000 : Double(number))
            } else {
                result.time = try? Date(text, strategy: .iso8601)
            }
        }
        if let location = params["location"]?.split(separator: ","), location.count == 2 {
            result.lat = Double(location[0])
            result.lon = Double(location[1])
        }
        result.lat = params["lat"].flatMap(Double.init) ?? result.lat
        result.lon = params["lon"].flatMap(Double.init) ?? result.lon
        result.speedKnots = params["speed"].flatMap(Double.init)
        result.course = (params["bearing"] ?? params["heading"]).flatMap(Double.init)
        result.altitude = params["altitude"].flatMap(Double.init)
        result.accuracy = params["accuracy"].flatMap(Double.init)
        result.hdop = params["hdop"].flatMap(Double.init)
        result.battery = params["batt"].flatMap(Double.init)
        return result
    }

    /// The JSON variant (Traccar Client).
    static func decode(json: Data) -> Decoded? {
        guard let root = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
              let location = root["location"] as? [String: Any], let coords = location["coords"] as? [String: Any]
        else { return nil }
        var result = Decoded(device: root["device_id"] as? String)
        result.time = (location["timestamp"] as? String).flatMap { try? Date($0, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) }
        result.lat = (coords["latitude"] as? NSNumber)?.doubleValue
        result.lon = (coords["longitude"] as? NSNumber)?.doubleValue
        if let speed = (coords["speed"] as? NSNumber)?.doubleValue, speed >= 0 { result.speedKnots = speed * OsmAnd.knotsPerMetrePerSecond }
        if let heading = (coords["heading"] as? NSNumber)?.doubleValue, heading >= 0 { result.course = heading }
        result.altitude = (coords["altitude"] as? NSNumber)?.doubleValue
        if let accuracy = (coords["accuracy"] as? NSNumber)?.doubleValue, accuracy >= minAccuracy { result.accuracy = accuracy }
        if let battery = location["battery"] as? [String: Any], let level = (battery["level"] as? NSNumber)?.doubleValue, level >= 0 {
            result.battery = (level * 100).rounded()
        }
        return result
    }
}

@Suite struct OsmAndConformanceTests {
    static var vectors: [String: Any] {
        let url = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Vectors/osmand-vectors.json")
        guard let data = try? Data(contentsOf: url), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    private static func query(of request: String) -> String {
        String(request.split(separator: " ")[1].drop { $0 != "?" }.dropFirst())
    }

    @Test func theReferenceDecoderAgreesWithEveryQueryVector() throws {
        let vectors = try #require(Self.vectors["query_form"] as? [[String: Any]])
        #expect(vectors.count == 11)
        for vector in vectors {
            let request = try #require(vector["req"] as? String)
            let decoded = OsmAndReferenceDecoder.decode(query: Self.query(of: request))
            guard vector["status"] as? Int == 200 else {
                #expect(decoded == nil, "\(request)")
                continue
            }
            let sut = try #require(decoded, "\(request)")
            guard let expect = vector["expect"] as? [String: Any] else { continue }
            if let time = expect["time"] as? String, let date = try? Date(time, strategy: .iso8601) { #expect(sut.time == date, "\(request)") }
            if let ms = expect["time_ms"] as? Int64 { #expect(sut.time == Date(timeIntervalSince1970: Double(ms) / 1000), "\(request)") }
            for (key, value) in [("lat", sut.lat), ("lon", sut.lon), ("altitude", sut.altitude), ("hdop", sut.hdop), ("speed_kn", sut.speedKnots), ("course", sut.course), ("batteryLevel", sut.battery)] {
                if let expected = expect[key] as? Double { #expect(value == expected, "\(key) of \(request)") }
            }
        }
    }

    @Test func theReferenceDecoderAgreesWithTheJSONVectors() throws {
        let vectors = try #require(Self.vectors["json_form"] as? [[String: Any]])
        let withBody = vectors.compactMap { vector -> ([String: Any], [String: Any])? in
            guard let body = vector["body"] as? [String: Any], let expect = vector["expect"] as? [String: Any] else { return nil }
            return (body, expect)
        }
        #expect(withBody.count == 4)
        for (body, expect) in withBody {
            let sut = try #require(OsmAndReferenceDecoder.decode(json: try JSONSerialization.data(withJSONObject: body)))
            if expect["course"] is String { #expect(sut.course == nil) }
            if let course = expect["course"] as? Double { #expect(sut.course == course) }
            if expect["accuracy"] is String { #expect(sut.accuracy == nil) }
            if let battery = expect["batteryLevel"] as? Double { #expect(sut.battery == battery) }
            if expect["speed"] as? String == "unset" { #expect(sut.speedKnots == nil) }
            if let speed = expect["speed_kn"] as? String, speed.hasPrefix("18.67") { #expect(abs((sut.speedKnots ?? 0) - 36.29) < 0.01) }
        }
    }

    /// A position with every field Tern sends, at a sub-second time.
    private static let queued = QueuedPosition(
        sequence: 7,
        position: Position(fix: Fix(
            time: Date(timeIntervalSince1970: 1_795_219_200.25), coordinate: Coordinate(latitude: 45.8150123, longitude: -15.9819456),
            altitude: 120.5, speed: 12.5, course: 87.25, quality: .gps, satellites: 9, hdop: 0.9, accuracy: 13.6)))

    @Test func traccarDecodesTernsQueryRequestToThePosition() throws {
        let sut = try #require(OsmAndReferenceDecoder.decode(query: OsmAnd.query(Self.queued, device: "pi-gps-01")))
        let fix = Self.queued.position.fix
        #expect(sut.device == "pi-gps-01")
        #expect(sut.time == fix.time)
        #expect(sut.lat == fix.coordinate.latitude && sut.lon == fix.coordinate.longitude)
        #expect(abs((sut.speedKnots ?? 0) - 12.5 * 3600 / 1852) < 1e-9)
        #expect(sut.course == 87.25 && sut.altitude == 120.5 && sut.accuracy == 13.6 && sut.hdop == 0.9)
    }

    @Test func traccarDecodesTernsJSONRequestToThePosition() throws {
        let sut = try #require(OsmAndReferenceDecoder.decode(json: OsmAnd.json(Self.queued, device: "pi-gps-01")))
        #expect(sut.device == "pi-gps-01")
        #expect(sut.time == Self.queued.position.fix.time)
        #expect(sut.lat == 45.8150123 && sut.lon == -15.9819456)
        #expect(abs((sut.speedKnots ?? 0) - 12.5 * 3600 / 1852) < 1e-9)
        #expect(sut.course == 87.25 && sut.altitude == 120.5 && sut.accuracy == 13.6)
    }

    @Test func aDeviceIdWithReservedCharactersSurvivesTheQueryString() throws {
        let sut = try #require(OsmAndReferenceDecoder.decode(query: OsmAnd.query(Self.queued, device: "van+1&x=2")))
        #expect(sut.device == "van+1&x=2")
    }

    @Test func missingValuesAreLeftOut() throws {
        var queued = Self.queued
        queued.position.fix = Fix(time: Self.queued.position.fix.time, coordinate: Self.queued.position.fix.coordinate)
        let query = OsmAnd.query(queued, device: "d")
        #expect(!query.contains("speed") && !query.contains("bearing") && !query.contains("altitude") && !query.contains("hdop"))
    }
}
