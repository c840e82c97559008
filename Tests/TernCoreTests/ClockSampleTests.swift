import Foundation
import Testing
import TernCore

@Suite struct ClockSampleTests {
    @Test func theOffsetIsTheReceiversUTCMinusWhenItWasRead() {
        let utc = Date(timeIntervalSince1970: 1_795_219_200)
        let sut = ClockSample(receivedAt: utc.addingTimeInterval(0.125), utc: utc)
        #expect(abs(sut.offset - -0.125) < 1e-9)
    }

    @Test func theReadTimeSplitsIntoSecondsAndMicroseconds() {
        let sut = ClockSample(receivedAt: Date(timeIntervalSince1970: 1_795_219_200.25), utc: Date())
        #expect(sut.timeval == (1_795_219_200, 250_000))
    }

    @Test func aReadTimeBefore1970KeepsItsMicrosecondsPositive() {
        let sut = ClockSample(receivedAt: Date(timeIntervalSince1970: -1.25), utc: Date())
        #expect(sut.timeval == (-2, 750_000))
    }

    @Test func aFixNotReadLiveMakesNoSample() {
        let fix = Fix(time: Date(timeIntervalSince1970: 1_795_219_200), coordinate: Coordinate(latitude: 45, longitude: 15))
        #expect(ClockSample(fix) == nil)
    }
}
