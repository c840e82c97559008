import Testing
import TernCore

@Suite struct GeodesyTests {
    @Test func oneDegreeOfLatitudeIsAbout111Kilometres() {
        let d = Geodesy.distance(Coordinate(latitude: 45, longitude: 16), Coordinate(latitude: 46, longitude: 16))
        #expect(abs(d - 111_195) < 10)
    }

    @Test func destinationThenDistanceRoundTrips() {
        let origin = Coordinate(latitude: 45.815, longitude: 15.98)
        let sut = Geodesy.destination(from: origin, distance: 1_234, bearing: 77)
        #expect(abs(Geodesy.distance(origin, sut) - 1_234) < 0.01)
        #expect(abs(Geodesy.bearing(from: origin, to: sut) - 77) < 0.01)
    }

    @Test func destinationWrapsAcrossTheAntimeridian() {
        let sut = Geodesy.destination(from: Coordinate(latitude: 0, longitude: 179.999), distance: 1_000, bearing: 90)
        #expect(sut.longitude < -179.99)
    }
}
