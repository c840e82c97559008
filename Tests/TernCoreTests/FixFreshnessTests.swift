import Foundation
import Testing
import TernCore
import TernTesting

/// Telling fixes measured after the receiver's power-on from leftovers of the previous power cycle.
struct FixFreshnessTests {
    /// A fix measured `seconds` after the fixtures' origin, arriving `delay` later on a monotonic clock
    /// that reads 0 at the origin.
    private func arrive(_ sut: inout FixFreshness, seconds: Double, delay: Double = 0.6) -> Bool {
        sut.isFresh(.fixture(seconds: seconds), arrivedAt: .seconds(seconds + delay))
    }

    @Test func aFixBeforeAnythingIsKnownIsFresh() {
        var sut = FixFreshness()
        sut.poweredOn(at: .seconds(100), systemTime: nil)
        let fresh1 = arrive(&sut, seconds: 3)
        #expect(fresh1)
    }

    @Test func aFixMeasuredAfterThePowerOnIsFresh() {
        var sut = FixFreshness()
        let fresh2 = arrive(&sut, seconds: 10)
        #expect(fresh2)
        sut.poweredOn(at: .seconds(70), systemTime: nil)
        let fresh3 = arrive(&sut, seconds: 72)
        #expect(fresh3)
    }

    @Test func aLeftoverFromTheLastPowerCycleIsStale() {
        var sut = FixFreshness()
        let fresh4 = arrive(&sut, seconds: 10)
        #expect(fresh4)
        sut.poweredOn(at: .seconds(70), systemTime: nil)
        // The epoch of second 11, open at the power-off, completed by the first sentence after power-on.
        let fresh5 = sut.isFresh(.fixture(seconds: 11), arrivedAt: .seconds(71))
        #expect(!fresh5)
        #expect(sut.staleFixes == 1)
    }

    @Test func theFirstPowerOnIsDatedByASynchronisedSystemClock() {
        var sut = FixFreshness()
        let origin = Fix.fixture().time
        sut.poweredOn(at: .seconds(5), systemTime: origin.addingTimeInterval(60))
        let fresh6 = arrive(&sut, seconds: 30)
        #expect(!fresh6)
        let fresh7 = arrive(&sut, seconds: 61)
        #expect(fresh7)
    }

    @Test func aFixWithinTheToleranceOfThePowerOnIsFresh() {
        var sut = FixFreshness()
        let fresh8 = arrive(&sut, seconds: 10, delay: 0)
        #expect(fresh8)
        sut.poweredOn(at: .seconds(70), systemTime: nil)
        let fresh9 = sut.isFresh(.fixture(seconds: 69.6), arrivedAt: .seconds(70.1))
        #expect(fresh9)
    }

    @Test func aReceiverClockThatJumpedBackCostsOneCycleOnly() {
        var sut = FixFreshness()
        let fresh10 = arrive(&sut, seconds: 100)
        #expect(fresh10)
        sut.poweredOn(at: .seconds(200), systemTime: nil)
        // The receiver now says 18 s earlier than before (GPS time corrected to UTC): stale once…
        let fresh11 = arrive(&sut, seconds: 182, delay: 20)
        #expect(!fresh11)
        // …and its clock is learnt from that fix, so the next power cycle is judged right.
        sut.poweredOn(at: .seconds(300), systemTime: nil)
        let fresh12 = sut.isFresh(.fixture(seconds: 283), arrivedAt: .seconds(301.5))
        #expect(fresh12)
    }
}
