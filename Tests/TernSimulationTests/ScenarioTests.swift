import Foundation
import Testing
import TernCore
import TernSimulation

@Suite struct ScenarioTests {
    /// Speeds between consecutive samples, m/s.
    private func speeds(_ trace: Trace) -> [Double] {
        zip(trace.points, trace.points.dropFirst()).map { a, b in
            Geodesy.distance(a.coordinate, b.coordinate) / b.time.timeIntervalSince(a.time)
        }
    }

    /// Seconds spent standing still (speed below 0.1 m/s between samples).
    private func stillSeconds(_ trace: Trace) -> Double {
        zip(trace.points, trace.points.dropFirst()).reduce(0) { sum, pair in
            let (a, b) = pair
            return Geodesy.distance(a.coordinate, b.coordinate) < 0.1 * b.time.timeIntervalSince(a.time)
                ? sum + b.time.timeIntervalSince(a.time) : sum
        }
    }

    @Test func commuteLastsAnHour() {
        #expect(Scenario.commute.trace.duration == 3600)
    }

    @Test func commuteMovesAtCarAndBikeSpeeds() throws {
        let top = try #require(speeds(Scenario.commute.trace).max())
        #expect((20...23).contains(top))
        let bikeLeg = Scenario.commute.trace.points.filter { $0.time.timeIntervalSince(Scenario.commute.trace.start) > 3000 }
        let bikeTop = try #require(speeds(Trace(name: "bike", points: bikeLeg)).max())
        #expect((4...6).contains(bikeTop))
    }

    @Test func commuteStopsAtLightsAndForCoffee() {
        // 60 s at home, 10 min coffee, 2 min at the car park, 3+ min at work, and the lights.
        let still = stillSeconds(Scenario.commute.trace)
        #expect((1200...1500).contains(still))
    }

    @Test func commuteTravelsBetweenHomeAndWork() throws {
        let trace = Scenario.commute.trace
        let distance = Geodesy.distance(trace.position(at: trace.start), trace.position(at: trace.end))
        #expect(distance > 10_000)
    }

    @Test func parkedDayStandsStillUntilItsDeparture() throws {
        let sut = Scenario.parkedDay
        let departure = try #require(sut.departure)
        let parked = sut.trace.position(at: sut.trace.start)
        #expect(sut.trace.position(at: sut.trace.start.addingTimeInterval(departure)) == parked)
        #expect(Geodesy.distance(sut.trace.position(at: sut.trace.start.addingTimeInterval(departure + 60)), parked) > 30)
    }

    @Test func parkedDayLasts24HoursAndDepartsInTheLast20Minutes() {
        #expect(Scenario.parkedDay.trace.duration == 86_400)
        #expect(Scenario.parkedDay.departure == 85_200.0)
    }

    @Test func indoorHasThreeNoSkySpansInsideTheWalk() {
        let sut = Scenario.indoor
        #expect(sut.noSky.count == 3)
        let lengths = sut.noSky.map { $0.upperBound - $0.lowerBound }
        #expect(zip(lengths, [720.0, 360, 1200]).allSatisfy { abs($0 - $1) < 1e-6 })
        #expect(sut.noSky.allSatisfy { $0.lowerBound > 0 && $0.upperBound < sut.trace.duration })
    }

    @Test func indoorKeepsMovingUnderground() {
        let sut = Scenario.indoor
        let passage = sut.noSky[1]
        let start = sut.trace.start
        let moved = Geodesy.distance(
            sut.trace.position(at: start.addingTimeInterval(passage.lowerBound)),
            sut.trace.position(at: start.addingTimeInterval(passage.upperBound)))
        #expect(moved > 350)
    }

    @Test func indoorWalksAtWalkingSpeed() throws {
        let top = try #require(speeds(Scenario.indoor.trace).max())
        #expect((1.3...1.5).contains(top))
    }

    @Test func namedFindsEachScenario() {
        #expect(Scenario.named("commute") == Scenario.commute)
        #expect(Scenario.named("parked-day") == Scenario.parkedDay)
        #expect(Scenario.named("indoor") == Scenario.indoor)
    }

    @Test func unknownScenarioIsNil() {
        #expect(Scenario.named("moon-landing") == nil)
    }

    @Test func namesListEveryScenario() {
        #expect(Scenario.all.map(\.name) == Scenario.names)
    }
}
