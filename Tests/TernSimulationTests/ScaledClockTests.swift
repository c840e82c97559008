import Testing
import TernSimulation

@Suite(.timeLimit(.minutes(1))) struct ScaledClockTests {
    @Test func runsFasterThanRealTimeBySpeed() async throws {
        let sut = ScaledClock(speed: 100)
        let real = ContinuousClock()
        let start = sut.now, realStart = real.now
        try await sut.sleep(until: start.advanced(by: .seconds(5)), tolerance: nil)
        let realElapsed = realStart.duration(to: real.now)
        #expect(start.duration(to: sut.now) >= .seconds(5))
        #expect(realElapsed >= .milliseconds(50))
        #expect(realElapsed < .seconds(5))
    }

    @Test func sleepingUntilThePastReturnsAtOnce() async throws {
        let sut = ScaledClock(speed: 1)
        let real = ContinuousClock()
        let realStart = real.now
        try await sut.sleep(until: sut.now.advanced(by: .seconds(-10)), tolerance: nil)
        // A clock that slept the distance instead would take 10 s; the margin absorbs a loaded machine.
        #expect(realStart.duration(to: real.now) < .seconds(5))
    }
}
