import TernCore
import Testing

private func s(_ value: Double) -> Duration { .milliseconds(Int64(value * 1000)) }

/// A monitor whose receiver was powered at time zero.
private func powered() -> LinkHealthMonitor {
    var sut = LinkHealthMonitor()
    _ = sut.handle(.powerChanged(on: true, now: .zero))
    return sut
}

private let garbage = LinkHealthMonitor.Sample(bytes: 100, garbageBytes: 90)
private let nmea = LinkHealthMonitor.Sample(bytes: 100, garbageBytes: 0, validSentences: 1)

@Suite struct LinkHealthMonitorTests {
    @Test func poweringOnArmsTheSilenceTimer() {
        var sut = LinkHealthMonitor()
        #expect(sut.handle(.powerChanged(on: true, now: s(1))) == [.wake(at: s(6))])
    }

    @Test func fiveSecondsWithoutABytePoweredIsSilent() {
        var sut = powered()
        #expect(sut.handle(.timerFired(now: s(5))) == [.report(.silent(since: .zero))])
    }

    @Test func bytesBeforeTheTimerPostponeSilence() {
        var sut = powered()
        _ = sut.handle(.received(nmea, now: s(3)))
        #expect(sut.handle(.timerFired(now: s(5))) == [.wake(at: s(8))])
    }

    @Test func bytesAfterSilenceReportHealthy() {
        var sut = powered()
        _ = sut.handle(.timerFired(now: s(5)))
        #expect(sut.handle(.received(nmea, now: s(7))) == [.report(.healthy), .wake(at: s(12))])
    }

    @Test func silenceIsNotJudgedWhilePoweredOff() {
        var sut = LinkHealthMonitor()
        #expect(sut.handle(.timerFired(now: s(60))) == [])
        #expect(sut.health == .healthy)
    }

    @Test func poweringOffEndsSilence() {
        var sut = powered()
        _ = sut.handle(.timerFired(now: s(5)))
        #expect(sut.handle(.powerChanged(on: false, now: s(6))) == [.report(.healthy)])
    }

    @Test func reopeningTheLinkRestartsTheSilenceCount() {
        var sut = powered()
        _ = sut.handle(.linkOpened(now: s(4)))
        #expect(sut.handle(.timerFired(now: s(5))) == [.wake(at: s(9))])
    }

    @Test func mostlyGarbageWithoutAValidSentenceIsWrongBaud() {
        var sut = powered()
        _ = sut.handle(.received(garbage, now: s(0.5)))
        #expect(sut.handle(.received(garbage, now: s(1))) == [.report(.wrongBaudSuspected)])
    }

    @Test func fewerThan200BytesAreNotEnoughToJudge() {
        var sut = powered()
        _ = sut.handle(.received(garbage, now: s(0.5)))
        #expect(sut.health == .healthy)
    }

    @Test func oneValidSentenceInTheWindowRulesOutWrongBaud() {
        var sut = powered()
        _ = sut.handle(.received(nmea, now: s(0.5)))
        _ = sut.handle(.received(garbage, now: s(1)))
        _ = sut.handle(.received(garbage, now: s(1.5)))
        #expect(sut.health == .healthy)
    }

    @Test func checksumErrorsCountAsBadBytes() {
        var sut = powered()
        _ = sut.handle(.received(.init(bytes: 150, checksumErrors: 2), now: s(0.5)))
        _ = sut.handle(.received(.init(bytes: 150, checksumErrors: 2), now: s(1)))
        #expect(sut.health == .wrongBaudSuspected)
    }

    @Test func samplesOlderThanTheWindowAreForgotten() {
        var sut = powered()
        _ = sut.handle(.received(garbage, now: s(0.5)))
        _ = sut.handle(.received(garbage, now: s(4)))
        #expect(sut.health == .healthy)
    }

    @Test func aValidSentenceAfterWrongBaudReportsHealthy() {
        var sut = powered()
        _ = sut.handle(.received(garbage, now: s(0.5)))
        _ = sut.handle(.received(garbage, now: s(1)))
        #expect(sut.handle(.received(nmea, now: s(1.5))) == [.report(.healthy)])
    }

    @Test func wrongBaudStandsUntilAValidSentenceEvenWhenLittleArrives() {
        var sut = powered()
        _ = sut.handle(.received(garbage, now: s(0.5)))
        _ = sut.handle(.received(garbage, now: s(1)))
        #expect(sut.handle(.received(.init(bytes: 10, garbageBytes: 10), now: s(9))) == [])
        #expect(sut.health == .wrongBaudSuspected)
    }

    @Test func reopeningTheLinkClearsAWrongBaudSuspicion() {
        var sut = powered()
        _ = sut.handle(.received(garbage, now: s(0.5)))
        _ = sut.handle(.received(garbage, now: s(1)))
        #expect(sut.handle(.linkOpened(now: s(2))) == [.report(.healthy)])
    }

    @Test func halfGoodHalfBadIsNotWrongBaud() {
        var sut = powered()
        _ = sut.handle(.received(.init(bytes: 400, garbageBytes: 200), now: s(1)))
        #expect(sut.health == .healthy)
    }
}
