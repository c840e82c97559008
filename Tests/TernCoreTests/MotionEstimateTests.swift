import Testing
import TernCore
import TernTesting

@Suite struct MotionEstimateTests {
    @Test func slowFixesAreStillAndCountStillTime() {
        var sut = MotionEstimate()
        sut.update(with: .fixture(seconds: 0, speed: 0.1), at: .seconds(0))
        sut.update(with: .fixture(seconds: 60, metresNorth: 3, speed: 0.2), at: .seconds(60))
        #expect(sut.isStill)
        #expect(sut.stillFor(at: .seconds(100)) == .seconds(100))
    }

    @Test func receiverSpeedMarksMovementAtOnce() {
        var sut = MotionEstimate()
        sut.update(with: .fixture(seconds: 0, speed: 0), at: .seconds(0))
        sut.update(with: .fixture(seconds: 600, speed: 3), at: .seconds(600))
        #expect(!sut.isStill)
    }

    @Test func speedChangeShowsAsAcceleration() {
        var sut = MotionEstimate()
        sut.update(with: .fixture(seconds: 0, speed: 10), at: .seconds(0))
        sut.update(with: .fixture(seconds: 10, metresNorth: 150, speed: 20), at: .seconds(10))
        #expect(sut.acceleration >= 1)
    }
}
