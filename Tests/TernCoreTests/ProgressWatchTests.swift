import Testing
import TernCore

@Suite struct ProgressWatchTests {
    private func sample(
        at seconds: Int, on: Bool = true, connected: Bool = true, bytes: Int = 0, busy: Bool = false, state: String = "idle",
        activity: Int = 0
    ) -> ProgressWatch.Sample {
        .init(
            now: .seconds(seconds), receiverOn: on, linkConnected: connected, bytesRead: bytes, forwarderBusy: busy, forwarderState: state,
            forwarderActivity: activity)
    }

    private var sut: ProgressWatch { ProgressWatch(readerStall: .seconds(60), forwarderStall: .seconds(600)) }

    @Test func bytesArrivingWhileTheReceiverIsOnAreProgress() {
        var sut = sut
        for t in stride(from: 0, through: 300, by: 30) { #expect(sut.check(sample(at: t, bytes: t * 100)) == nil) }
    }

    @Test func noBytesForAMinuteWhileOnAndConnectedIsAStuckReader() {
        var sut = sut
        #expect(sut.check(sample(at: 0, bytes: 500)) == nil)
        #expect(sut.check(sample(at: 59, bytes: 500)) == nil)
        #expect(sut.check(sample(at: 60, bytes: 500))?.contains("reader has read nothing for 60 s") == true)
    }

    @Test func aReceiverSwitchedOffIsNotExpectedToSendBytes() {
        var sut = sut
        for t in stride(from: 0, through: 3600, by: 30) { #expect(sut.check(sample(at: t, on: false, bytes: 500)) == nil) }
    }

    @Test func aSilentOrGoneLinkIsTheLinksOwnReportNotAStuckReader() {
        var sut = sut
        for t in stride(from: 0, through: 600, by: 30) { #expect(sut.check(sample(at: t, connected: false, bytes: 500)) == nil) }
    }

    @Test func theStallCountsFromWhenTheReceiverWasSwitchedOn() {
        var sut = sut
        #expect(sut.check(sample(at: 0, on: false, bytes: 500)) == nil)
        #expect(sut.check(sample(at: 500, on: true, bytes: 500)) == nil)
        #expect(sut.check(sample(at: 559, on: true, bytes: 500)) == nil)
        #expect(sut.check(sample(at: 560, on: true, bytes: 500)) != nil)
    }

    @Test func aForwarderBusyWithoutFinishingBeyondTheStallIsWedged() {
        var sut = sut
        #expect(sut.check(sample(at: 0, on: false, busy: true, state: "uploading", activity: 3)) == nil)
        #expect(sut.check(sample(at: 599, on: false, busy: true, state: "uploading", activity: 3)) == nil)
        #expect(sut.check(sample(at: 600, on: false, busy: true, state: "uploading", activity: 3))?.contains("forwarder has been uploading") == true)
    }

    @Test func aForwarderFinishingAttemptsIsProgressEvenWhileAlwaysBusy() {
        var sut = sut
        for (i, t) in stride(from: 0, through: 3600, by: 300).enumerated() {
            #expect(sut.check(sample(at: t, on: false, busy: true, state: "uploading", activity: i)) == nil)
        }
    }

    @Test func aForwarderWaitingOutABackoffOrABlockIsNotWedged() {
        var sut = sut
        for t in stride(from: 0, through: 7200, by: 300) {
            #expect(sut.check(sample(at: t, on: false, busy: false, state: "blocked", activity: 1)) == nil)
        }
    }
}
