import Foundation
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

    @Test func aRightAngleTurnMakesTheSharpnessSinOf45Degrees() {
        var sut = MotionEstimate()
        sut.update(with: .fixture(seconds: 0, speed: 1.4, course: 0), at: .seconds(0))
        sut.update(with: .fixture(seconds: 60, metresNorth: 42, metresEast: 42, speed: 1.4, course: 90), at: .seconds(60))
        #expect(abs(sut.sharpness - 0.5.squareRoot()) < 1e-9)
    }

    @Test func sharpnessFadesWithTheDistanceTravelledStraight() {
        var sut = MotionEstimate(cornerMemory: 1000)
        sut.update(with: .fixture(seconds: 0, speed: 10, course: 0), at: .seconds(0))
        sut.update(with: .fixture(seconds: 60, metresEast: 600, speed: 10, course: 90), at: .seconds(60))
        let afterTurn = sut.sharpness
        sut.update(with: .fixture(seconds: 160, metresEast: 1600, speed: 10, course: 90), at: .seconds(160))
        #expect(abs(sut.sharpness - afterTurn * exp(-1)) < 1e-3)
    }
    @Test func aStillReceiverDisplacedByALastingErrorStaysStill() {
        // Multipath displaces a parked fix 40 m; over 30 s that reads as 1.3 m/s the receiver never measured.
        var sut = MotionEstimate()
        sut.update(with: .fixture(seconds: 0, speed: 0), at: .seconds(0))
        sut.update(with: .fixture(seconds: 30, metresNorth: 40, speed: 0), at: .seconds(30))
        #expect(sut.isStill)
    }

    @Test func withoutAReportedSpeedADisplacementBeyondTheNoiseIsMovement() {
        var sut = MotionEstimate()
        sut.update(with: .fixture(seconds: 0, speed: nil), at: .seconds(0))
        sut.update(with: .fixture(seconds: 60, metresNorth: 300, speed: nil), at: .seconds(60))
        #expect(!sut.isStill)
    }
}
