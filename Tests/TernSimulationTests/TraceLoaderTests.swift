import Foundation
import Testing
import TernCore
import TernSimulation

@Suite struct TraceLoaderTests {
    private func gpx(_ text: String) throws -> TraceFile {
        try TraceLoader.gpx(Array(text.utf8), name: "sample", file: "sample.gpx")
    }

    private func csv(_ text: String) throws -> TraceFile {
        try TraceLoader.csv(Array(text.utf8), name: "sample", file: "sample.csv")
    }

    private func loadError(_ body: () throws -> TraceFile) -> TraceLoadError? {
        do {
            _ = try body()
            return nil
        } catch let error as TraceLoadError {
            return error
        } catch {
            return nil
        }
    }

    private static let gpx11 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1" creator="test">
          <metadata><time>2020-01-01T00:00:00Z</time></metadata>
          <wpt lat="1" lon="1"><time>2020-01-01T00:00:00Z</time></wpt>
          <trk><name>a</name><trkseg>
            <trkpt lat="45.0" lon="14.0"><ele>10</ele><time>2020-12-18T06:15:50Z</time></trkpt>
            <trkpt lon="14.001" lat="45.001"><time>2020-12-18T06:16:00Z</time></trkpt>
          </trkseg><trkseg>
            <trkpt lat='45.002' lon='14.002'><time>2020-12-18T06:16:10Z</time></trkpt>
          </trkseg></trk>
        </gpx>
        """

    // MARK: GPX

    @Test func readsTrackPointsOfEverySegment() throws {
        let sut = try gpx(Self.gpx11)
        #expect(sut.trace.points.count == 3)
        #expect(sut.trace.points[1].coordinate == Coordinate(latitude: 45.001, longitude: 14.001))
    }

    @Test func ignoresWaypointsAndMetadataTimes() throws {
        let sut = try gpx(Self.gpx11)
        #expect(sut.trace.start == ISO8601.parse("2020-12-18T06:15:50Z"))
        #expect(sut.trace.duration == 20)
    }

    @Test func readsRoutePoints() throws {
        let sut = try gpx("""
            <gpx version="1.0"><rte><rtept lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></rtept>\
            <rtept lat="1.1" lon="2"><time>2020-01-01T00:01:00Z</time></rtept></rte></gpx>
            """)
        #expect(sut.trace.points.count == 2)
        #expect(sut.trace.duration == 60)
    }

    @Test func readsPrefixedNamespacedElements() throws {
        let sut = try gpx("""
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/1"><g:trk><g:trkseg>
            <g:trkpt lat="1" lon="2"><g:time>2020-01-01T00:00:00Z</g:time></g:trkpt>
            <g:trkpt lat="1.001" lon="2"><g:time>2020-01-01T00:00:05Z</g:time></g:trkpt>
            </g:trkseg></g:trk></g:gpx>
            """)
        #expect(sut.trace.points.count == 2)
    }

    @Test func readsASingleLineFile() throws {
        let sut = try gpx(Self.gpx11.replacingOccurrences(of: "\n", with: ""))
        #expect(sut.trace.points.count == 3)
    }

    @Test func skipsAndCountsPointsWithoutTime() throws {
        let sut = try gpx("""
            <gpx><trk><trkseg><trkpt lat="1" lon="2"/><trkpt lat="1" lon="2"><ele>3</ele></trkpt>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>
            """)
        #expect(sut.pointCount == 3)
        #expect(sut.untimedCount == 2)
        #expect(sut.trace.points.count == 1)
    }

    @Test func skipsCommentsAndCDATA() throws {
        let sut = try gpx("""
            <gpx><!-- <trkpt lat="9" lon="9"> --><trk><name><![CDATA[<trkpt lat="8" lon="8">]]></name><trkseg>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>
            """)
        #expect(sut.trace.points.map(\.coordinate) == [Coordinate(latitude: 1, longitude: 2)])
    }

    @Test func badLatitudeNamesFileAndLine() {
        let error = loadError {
            try gpx("<gpx>\n<trk><trkseg>\n<trkpt lat=\"north\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt>\n</trkseg></trk></gpx>")
        }
        #expect(error?.file == "sample.gpx")
        #expect(error?.line == 3)
        #expect(error?.description.hasPrefix("sample.gpx:3: bad latitude 'north'") == true)
    }

    @Test func badTimeNamesTheLine() {
        let error = loadError {
            try gpx("<gpx><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\">\n<time>yesterday</time></trkpt></trkseg></trk></gpx>")
        }
        #expect(error?.line == 3)
        #expect(error?.reason.contains("bad <time> 'yesterday'") == true)
    }

    @Test func truncatedFileNamesTheOpenPoint() {
        let error = loadError { try gpx("<gpx><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time>") }
        #expect(error?.reason.contains("opened at line 2") == true)
    }

    @Test func pointWithoutCoordinatesIsAnError() {
        let error = loadError { try gpx("<gpx><trk><trkseg><trkpt lat=\"1\"></trkpt></trkseg></trk></gpx>") }
        #expect(error?.reason.contains("without lat and lon") == true)
    }

    @Test func fileWithoutTimedPointsIsAnError() {
        let error = loadError { try gpx("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"/></trkseg></trk></gpx>") }
        #expect(error?.reason == "none of the 1 points has a <time>")
        #expect(error?.line == nil)
    }

    @Test func nonGPXIsAnError() {
        let error = loadError { try gpx("<html><body>hello</body></html>") }
        #expect(error?.reason == "not a GPX file (no <gpx> element)")
    }

    // MARK: CSV

    @Test func readsCSVWithHeader() throws {
        let sut = try csv("time,lat,lon\n2020-06-04T11:00:30Z,36.84963,-76.31543\n2020-06-04T11:01:40Z,36.84966,-76.31548\n")
        #expect(sut.trace.points.count == 2)
        #expect(sut.trace.duration == 70)
        #expect(sut.trace.points[0].coordinate == Coordinate(latitude: 36.84963, longitude: -76.31543))
    }

    @Test func readsCSVWithoutHeaderAndWithCRLF() throws {
        let sut = try csv("2020-06-04T11:00:30Z,1,2\r\n\r\n# note\r\n2020-06-04T11:00:31Z,1,2.0001\r\n")
        #expect(sut.trace.points.count == 2)
    }

    @Test func csvHeaderMapsReorderedColumns() throws {
        let sut = try csv("mmsi,LON,LAT,Timestamp\n1,-76.3,36.8,2020-06-04T11:00:30Z\n")
        #expect(sut.trace.points[0].coordinate == Coordinate(latitude: 36.8, longitude: -76.3))
    }

    @Test func csvBadTimeNamesTheLine() {
        let error = loadError { try csv("time,lat,lon\n2020-06-04T11:00:30Z,1,2\n04/06/2020 11:00,1,2\n") }
        #expect(error?.description.hasPrefix("sample.csv:3: bad time '04/06/2020 11:00'") == true)
    }

    @Test func csvShortRowNamesTheLine() {
        let error = loadError { try csv("time,lat,lon\n2020-06-04T11:00:30Z,1\n") }
        #expect(error?.line == 2)
        #expect(error?.reason.contains("expected 3 fields") == true)
    }

    @Test func csvOutOfRangeLongitudeIsAnError() {
        let error = loadError { try csv("2020-06-04T11:00:30Z,1,200\n") }
        #expect(error?.reason.contains("bad longitude '200'") == true)
    }

    @Test func emptyCSVIsAnError() {
        let error = loadError { try csv("time,lat,lon\n") }
        #expect(error?.reason.contains("no data rows") == true)
    }

    // MARK: Files and times

    @Test func missingFileSaysSo() {
        let error = loadError { try TraceLoader.load(path: "/nonexistent/track.gpx") }
        #expect(error?.description == "/nonexistent/track.gpx: no such file")
    }

    @Test func sniffsGPXWithoutExtension() throws {
        let path = NSTemporaryDirectory() + "tern-trace-\(UUID().uuidString)"
        try Self.gpx11.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sut = try TraceLoader.load(path: path)
        #expect(sut.format == .gpx)
    }

    @Test func parsesOffsetsAndFractions() {
        #expect(ISO8601.parse("2020-06-04T13:00:30.5+02:00") == ISO8601.parse("2020-06-04T11:00:30Z")?.addingTimeInterval(0.5))
        #expect(ISO8601.parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
    }

    @Test func rejectsImpossibleDates() {
        #expect(ISO8601.parse("2021-02-29T00:00:00Z") == nil)
        #expect(ISO8601.parse("2020-06-04T25:00:00Z") == nil)
        #expect(ISO8601.parse("2020-06-04T11:00:30Zjunk") == nil)
    }
}

/// The ground-truth traces copied into Traces/ from the team's shared data (see Traces/README.md for sources and licences).
@Suite struct GroundTruthTraceTests {
    static let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Traces").path

    private func load(_ name: String) throws -> TraceFile {
        try TraceLoader.load(path: Self.directory + "/" + name)
    }

    @Test func hikeHas871PointsOver3Point7Hours() throws {
        let sut = try load("korita-zbevnica.gpx")
        #expect(sut.pointCount == 871)
        // One of its four tracks (358 points) has no times: 513 timed points remain.
        #expect(sut.untimedCount == 358)
        #expect(sut.trace.points.count == 513)
        #expect(abs(sut.trace.duration / 3600 - 3.7) < 0.05)
    }

    @Test func rideHas296PointsOverTwoHours() throws {
        let sut = try load("cerknicko-jezero.gpx")
        #expect(sut.pointCount == 296)
        #expect(sut.untimedCount == 0)
        #expect(abs(sut.trace.duration / 3600 - 2) < 0.2)
    }

    @Test func carDriveHas104PointsOver8Point6Minutes() throws {
        let sut = try load("around-visnjan-with-car.gpx")
        #expect(sut.pointCount == 104)
        #expect(sut.trace.points.count == 104)
        #expect(abs(sut.trace.duration / 60 - 8.6) < 0.1)
    }

    @Test func fourAISTracksOf7To12Hours() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory).filter { $0.hasPrefix("ais-") }.sorted()
        let sut = try names.map(load)
        #expect(sut.count == 4)
        for file in sut {
            #expect((320...516).contains(file.pointCount), "\(file.trace.name): \(file.pointCount) points")
            #expect((7 * 3600...12.1 * 3600).contains(file.trace.duration), "\(file.trace.name): \(file.trace.duration) s")
        }
    }

    @Test func everyCopiedTraceLoads() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory)
            .filter { $0.hasSuffix(".gpx") || $0.hasSuffix(".csv") }
        #expect(names.count == 7)
        for name in names {
            #expect(throws: Never.self) { try load(name) }
        }
    }

    @Test func everyCopiedTraceHasAMotionClassInTheManifest() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory)
            .filter { $0.hasSuffix(".gpx") || $0.hasSuffix(".csv") }.sorted()
        let classes = try MotionClass.manifest(in: Self.directory)
        #expect(classes.keys.sorted() == names)
    }
}
