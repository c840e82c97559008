import Foundation
import Testing
import TernCore
@testable import TernUplink

@Suite struct OwnTracksLocationTests {
    private let created = Date(timeIntervalSince1970: 1_795_000_042.7)

    private func position(
        time: TimeInterval = 1_795_000_001.9, altitude: Double? = 120.5, speed: Double? = 1.25,
        course: Double? = 87.4, accuracy: Double? = 3.5, latitude: Double = 45.81
    ) -> QueuedPosition {
        let fix = Fix(
            time: Date(timeIntervalSince1970: time), coordinate: Coordinate(latitude: latitude, longitude: 15.97),
            altitude: altitude, speed: speed, course: course, quality: .gps, satellites: 9, hdop: 0.9,
            accuracy: accuracy)
        let id = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF") ?? UUID()
        return QueuedPosition(sequence: 7, position: Position(id: id, fix: fix))
    }

    private func json(_ sut: OwnTracksLocation) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(try sut.encoded()))
        return try #require(object as? [String: Any])
    }

    @Test func locationCarriesTheOwnTracksFieldsAndTheTernId() throws {
        let tid = try OwnTracksTrackerID(configured: "P1", device: "pi-gps-01")
        let sut = OwnTracksLocation(position(), trackerID: tid, createdAt: created)

        let text = String(decoding: try sut.encoded(), as: UTF8.self)

        #expect(text == #"{"_type":"location","acc":4,"alt":121,"cog":87,"created_at":1795000042,"lat":45.81,"#
            + #""lon":15.97,"tern_id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","tid":"P1","tst":1795000001,"vel":5}"#)
    }

    @Test func timesAreWholeUnixSecondsRoundedDown() throws {
        let sut = OwnTracksLocation(
            position(time: 1_795_000_001.999), trackerID: try OwnTracksTrackerID(configured: nil, device: "a1"),
            createdAt: created)

        #expect(sut.tst == 1_795_000_001)
        #expect(sut.createdAt == 1_795_000_042)
    }

    @Test(arguments: [
        (0.0, 0), (1.25, 5), (1.38, 5), (1.39, 5), (1.4, 5), (1.53, 6), (30.0, 108),
    ])
    func speedIsWholeKilometresPerHour(metresPerSecond: Double, kmh: Int) throws {
        let sut = OwnTracksLocation(
            position(speed: metresPerSecond), trackerID: try OwnTracksTrackerID(configured: "x", device: "d"),
            createdAt: created)

        #expect(sut.vel == kmh)
    }

    @Test(arguments: [(0.4, 0), (87.5, 88), (359.4, 359), (359.6, 0), (360.0, 0), (-1.0, 359)])
    func courseIsWholeDegreesFromZeroTo359(course: Double, degrees: Int) throws {
        let sut = OwnTracksLocation(
            position(course: course), trackerID: try OwnTracksTrackerID(configured: "x", device: "d"),
            createdAt: created)

        #expect(sut.cog == degrees)
    }

    @Test func unknownValuesAreLeftOutNotSentAsZero() throws {
        let sut = OwnTracksLocation(
            position(altitude: nil, speed: nil, course: .nan, accuracy: .infinity),
            trackerID: try OwnTracksTrackerID(configured: "x", device: "d"), createdAt: created)

        let keys = Set(try json(sut).keys)

        #expect(keys == ["_type", "tid", "tst", "lat", "lon", "created_at", "tern_id"])
    }

    @Test func verticalAccuracyComesFromTheReceiversAltitudeEstimate() throws {
        var queued = position()
        queued.position.fix.errorEstimate = ErrorEstimate(latitude: 2, longitude: 2, altitude: 4.6)

        let sut = OwnTracksLocation(queued, trackerID: try OwnTracksTrackerID(configured: "x", device: "d"), createdAt: created)

        #expect(try json(sut)["vac"] as? Int == 5)
    }

    @Test func positionWithoutAFiniteLatitudeCannotBeEncodedAndSaysWhich() throws {
        let sut = OwnTracksLocation(
            position(latitude: .nan), trackerID: try OwnTracksTrackerID(configured: "x", device: "d"), createdAt: created)

        let error = #expect(throws: OwnTracksEncodingError.self) { try sut.encoded() }

        #expect(error?.description.contains("6F9619FF-8B86-D011-B42D-00C04FC964FF") == true)
    }

    @Test(arguments: [("pi-gps-01", "01"), ("tern", "rn"), ("a", "a"), ("gw-7_", "w7"), ("---", "TN")])
    func trackerIdDefaultsToTheDeviceNamesLastTwoLettersOrDigits(device: String, tid: String) throws {
        #expect(try OwnTracksTrackerID(configured: nil, device: device).value == tid)
        #expect(try OwnTracksTrackerID(configured: "", device: device).value == tid)
    }

    @Test(arguments: ["ABC", "a b"])
    func trackerIdLongerThanTwoCharactersIsAConfigErrorNamingTheKey(configured: String) {
        let error = #expect(throws: UplinkConfigError.self) {
            try OwnTracksTrackerID(configured: configured, device: "d")
        }

        #expect(error?.key == "uplink.tracker_id")
        #expect(error?.description.contains(configured) == true)
    }
}
