import TernCore
import Testing

private func ms(_ value: Int64) -> Duration { .milliseconds(value) }

/// A machine that opened once and is connected.
private func connected() -> ReconnectStateMachine {
    var sut = ReconnectStateMachine()
    _ = sut.handle(.start)
    _ = sut.handle(.opened)
    return sut
}

@Suite struct ReconnectStateMachineTests {
    @Test func startOpensTheDevice() {
        var sut = ReconnectStateMachine()
        #expect(sut.handle(.start) == [.open])
    }

    @Test func aSuccessfulOpenReportsConnected() {
        var sut = ReconnectStateMachine()
        _ = sut.handle(.start)
        #expect(sut.handle(.opened) == [.report(.connected)])
    }

    @Test func aFailedFirstOpenReportsGoneAndRetriesAfter100ms() {
        var sut = ReconnectStateMachine()
        _ = sut.handle(.start)
        #expect(sut.handle(.openFailed(reason: "no such device", now: ms(0)))
            == [.report(.gone(reason: "no such device")), .wake(at: ms(100))])
    }

    @Test func aDisconnectReportsGoneAndSchedulesAReopen() {
        var sut = connected()
        #expect(sut.handle(.disconnected(reason: "hang-up", now: ms(1000)))
            == [.report(.gone(reason: "hang-up")), .wake(at: ms(1100))])
    }

    @Test func theTimerReopensTheDevice() {
        var sut = connected()
        _ = sut.handle(.disconnected(reason: "hang-up", now: ms(0)))
        #expect(sut.handle(.timerFired(now: ms(100))) == [.open])
    }

    @Test func anEarlyTimerDoesNothing() {
        var sut = connected()
        _ = sut.handle(.disconnected(reason: "hang-up", now: ms(0)))
        #expect(sut.handle(.timerFired(now: ms(99))) == [])
    }

    @Test func theDelayDoublesAfterEachFailureUpToTwoSeconds() {
        var sut = connected()
        var actions = sut.handle(.disconnected(reason: "hang-up", now: .zero))
        var delays: [Duration] = []
        var now = Duration.zero
        for _ in 0..<7 {
            guard case let .wake(at)? = actions.last else { break }
            delays.append(at - now)
            now = at
            _ = sut.handle(.timerFired(now: now))
            actions = sut.handle(.openFailed(reason: "no such device", now: now))
        }
        #expect(delays == [ms(100), ms(200), ms(400), ms(800), ms(1600), ms(2000), ms(2000)])
    }

    @Test func repeatedFailuresWithTheSameReasonAreReportedOnce() {
        var sut = ReconnectStateMachine()
        _ = sut.handle(.start)
        _ = sut.handle(.openFailed(reason: "no such device", now: ms(0)))
        _ = sut.handle(.timerFired(now: ms(100)))
        #expect(sut.handle(.openFailed(reason: "no such device", now: ms(100))) == [.wake(at: ms(300))])
    }

    @Test func reconnectingResetsTheBackoff() {
        var sut = connected()
        _ = sut.handle(.disconnected(reason: "hang-up", now: ms(0)))
        _ = sut.handle(.timerFired(now: ms(100)))
        _ = sut.handle(.openFailed(reason: "no such device", now: ms(100)))
        _ = sut.handle(.timerFired(now: ms(300)))
        _ = sut.handle(.opened)
        #expect(sut.handle(.disconnected(reason: "hang-up", now: ms(5000)))
            == [.report(.gone(reason: "hang-up")), .wake(at: ms(5100))])
    }

    @Test func aReturningDeviceIsReopenedWithinTheCapAfterAnyOutage() {
        var sut = connected()
        var wake = Duration.zero
        if case let .wake(at)? = sut.handle(.disconnected(reason: "hang-up", now: .zero)).last { wake = at }
        let back = Duration.seconds(60)
        while wake < back {
            _ = sut.handle(.timerFired(now: wake))
            if case let .wake(at)? = sut.handle(.openFailed(reason: "gone", now: wake)).last { wake = at }
        }
        #expect(wake - back <= .seconds(2))
    }

    @Test func aDisconnectWhileNotConnectedIsIgnored() {
        var sut = ReconnectStateMachine()
        _ = sut.handle(.start)
        #expect(sut.handle(.disconnected(reason: "hang-up", now: ms(0))) == [])
    }

    @Test func stopEndsEverything() {
        var sut = connected()
        _ = sut.handle(.stop)
        #expect(sut.handle(.disconnected(reason: "hang-up", now: ms(0))) == [])
        #expect(sut.state == .stopped)
    }
}

extension ReconnectStateMachineTests {
    @Test func anOpenedWithNoOpenUnderWayIsAProgrammingErrorThatChangesNothing() {
        var sut = connected()
        let actions = sut.handle(.opened)
        guard case .invalidEvent? = actions.first, actions.count == 1 else {
            Issue.record("not reported as invalid: \(actions)")
            return
        }
        #expect(sut.state == .connected)
        #expect(sut.invalidEvents == 1)
    }
}
