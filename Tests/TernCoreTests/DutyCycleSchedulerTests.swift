import Testing
import TernCore

@Suite struct DutyCycleSchedulerTests {
    private func makeSUT(interval: Int = 60, timeout: Int = 30) -> DutyCycleScheduler {
        DutyCycleScheduler(options: .init(interval: .seconds(interval), acquisitionTimeout: .seconds(timeout)))
    }

    @Test func startPowersOnAndArmsTheAcquisitionTimeout() {
        var sut = makeSUT()
        #expect(sut.handle(.start(now: .zero)) == [.powerOn, .wake(at: .seconds(30))])
        #expect(sut.wantsFix)
    }

    @Test func acceptedFixPowersOffUntilTheNextSlot() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        #expect(sut.handle(.fixAccepted(now: .seconds(5))) == [.powerOff, .wake(at: .seconds(60))])
        #expect(!sut.wantsFix)
    }

    @Test func timerAtTheNextSlotPowersOnAgain() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.fixAccepted(now: .seconds(5)))
        #expect(sut.handle(.timerFired(now: .seconds(60))) == [.powerOn, .wake(at: .seconds(90))])
    }

    @Test func acquisitionTimeoutPowersOffAndKeepsTheCadence() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        #expect(sut.handle(.timerFired(now: .seconds(30))) == [.powerOff, .wake(at: .seconds(60))])
        #expect(sut.timeouts == 1)
    }

    @Test func earlyTimerIsIgnored() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.fixAccepted(now: .seconds(5)))
        #expect(sut.handle(.timerFired(now: .seconds(30))) == [])
    }

    @Test func staleAcquisitionTimerAfterAFixIsIgnored() {
        var sut = makeSUT(interval: 120, timeout: 30)
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.fixAccepted(now: .seconds(2)))
        #expect(sut.handle(.timerFired(now: .seconds(30))) == [])
    }

    @Test func slowFixSkipsSlotsAlreadyPassed() {
        var sut = makeSUT(interval: 10, timeout: 60)
        _ = sut.handle(.start(now: .zero))
        #expect(sut.handle(.fixAccepted(now: .seconds(25))) == [.powerOff, .wake(at: .seconds(30))])
    }

    @Test func fixWhileOffIsNotWantedAndChangesNothing() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.fixAccepted(now: .seconds(5)))
        #expect(sut.handle(.fixAccepted(now: .seconds(6))) == [])
        #expect(sut.cyclesWithFix == 1)
    }

    @Test func zeroIntervalKeepsTheReceiverOn() {
        var sut = makeSUT(interval: 0)
        #expect(sut.handle(.start(now: .zero)) == [.powerOn])
        #expect(sut.handle(.fixAccepted(now: .seconds(1))) == [])
        #expect(sut.wantsFix)
    }

    @Test func stopWhileAcquiringPowersOff() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        #expect(sut.handle(.stop) == [.powerOff])
        #expect(sut.handle(.timerFired(now: .seconds(100))) == [])
    }

    @Test func stopWhileOffDoesNotTouchPower() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.fixAccepted(now: .seconds(5)))
        #expect(sut.handle(.stop) == [])
    }

    @Test func aDayOfDutyCyclingTakesOneFixPerInterval() {
        var sut = makeSUT(interval: 60, timeout: 30)
        var now = Duration.zero
        var powerOns = 0
        var wake = Duration.zero
        for action in sut.handle(.start(now: now)) {
            if action == .powerOn { powerOns += 1 }
            if case let .wake(at) = action { wake = at }
        }
        while now < .seconds(86_400) {
            now += .seconds(3)  // the receiver needs 3 s to a fix
            for action in sut.handle(.fixAccepted(now: now)) { if case let .wake(at) = action { wake = at } }
            now = wake
            for action in sut.handle(.timerFired(now: now)) {
                if action == .powerOn { powerOns += 1 }
                if case let .wake(at) = action { wake = at }
            }
        }
        #expect(powerOns == 1441)
        #expect(sut.cyclesWithFix == 1440)
    }
}
