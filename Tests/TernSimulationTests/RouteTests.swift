import Testing
import TernCore
import TernSimulation

@Suite struct RouteTests {
    private let sut = Route(
        waypoints: [Coordinate(latitude: 45, longitude: 16), Coordinate(latitude: 45.01, longitude: 16)],
        speed: 10, driveDuration: 100, stopDuration: 20)

    @Test func startsAtTheFirstWaypoint() {
        #expect(sut.state(at: 0).coordinate == Coordinate(latitude: 45, longitude: 16))
    }

    @Test func movesAtItsSpeedWhileDriving() {
        let distance = Geodesy.distance(sut.state(at: 0).coordinate, sut.state(at: 50).coordinate)
        #expect(abs(distance - 500) < 1)
        #expect(sut.state(at: 50).speed == 10)
    }

    @Test func standsStillDuringAStop() {
        #expect(sut.state(at: 105).coordinate == sut.state(at: 115).coordinate)
        #expect(sut.state(at: 105).speed == 0)
    }

    @Test func resumesAfterTheStop() {
        let distance = Geodesy.distance(sut.state(at: 120).coordinate, sut.state(at: 130).coordinate)
        #expect(abs(distance - 100) < 1)
    }

    @Test func loopsBackToTheStart() {
        let lap = sut.length / sut.speed  // seconds of driving per lap
        let cycles = (lap / sut.driveDuration).rounded(.down)
        let t = lap + cycles * sut.stopDuration
        #expect(Geodesy.distance(sut.state(at: t).coordinate, sut.state(at: 0).coordinate) < 1)
    }
}
