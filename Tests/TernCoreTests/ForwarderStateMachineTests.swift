import Testing
import TernCore

@Suite struct ForwarderStateMachineTests {
    private func makeSUT() -> ForwarderStateMachine {
        ForwarderStateMachine(backoff: Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0))
    }

    @Test func newPositionsStartAnUpload() {
        var sut = makeSUT()
        #expect(sut.handle(.positionsAvailable) == [.uploadNextBatch])
    }

    @Test func positionsArrivingDuringAnUploadAreRememberedNotSentTwice() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.positionsAvailable) == [])
        #expect(sut.handle(.uploadFinished(.nothingToSend, now: .zero)) == [.uploadNextBatch])
    }

    @Test func deliveredBatchIsAcknowledgedBeforeTheNextUpload() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.delivered(lastSequence: 7), now: .zero)) == [.acknowledge(through: 7)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [.uploadNextBatch])
    }

    @Test func aFailedAcknowledgementIsRetriedAfterABackoffWithoutSendingTheBatchAgain() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.delivered(lastSequence: 7), now: .zero))
        #expect(sut.handle(.acknowledgeFailed(reason: "disk full", now: .seconds(1))) == [.wake(at: .seconds(2))])
        #expect(sut.handle(.positionsAvailable) == [])
        #expect(sut.handle(.connectivity(.mayBeOnline)) == [])
        #expect(sut.handle(.timerFired(now: .seconds(2))) == [.acknowledge(through: 7)])
        #expect(sut.handle(.acknowledgeFailed(reason: "disk full", now: .seconds(2))) == [.wake(at: .seconds(4))])
        #expect(sut.handle(.timerFired(now: .seconds(4))) == [.acknowledge(through: 7)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [.uploadNextBatch])
    }

    @Test func emptyQueueGoesIdle() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.nothingToSend, now: .zero)) == [])
        #expect(sut.state == .idle)
    }

    @Test func retryableFailureBacksOffExponentially() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.retryable(reason: "refused"), now: .zero)) == [.wake(at: .seconds(1))])
        #expect(sut.handle(.timerFired(now: .seconds(1))) == [.uploadNextBatch])
        #expect(sut.handle(.uploadFinished(.retryable(reason: "refused"), now: .seconds(1))) == [.wake(at: .seconds(3))])
        #expect(sut.handle(.timerFired(now: .seconds(3))) == [.uploadNextBatch])
        #expect(sut.handle(.uploadFinished(.retryable(reason: "refused"), now: .seconds(3))) == [.wake(at: .seconds(7))])
    }

    @Test func newPositionsDuringBackoffDoNotBypassIt() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.retryable(reason: "refused"), now: .zero))
        #expect(sut.handle(.positionsAvailable) == [])
    }

    @Test func connectivityBackEndsTheBackoffAtOnce() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.retryable(reason: "refused"), now: .zero))
        #expect(sut.handle(.connectivity(.mayBeOnline)) == [.uploadNextBatch])
    }

    @Test func successResetsTheBackoff() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.retryable(reason: "x"), now: .zero))
        _ = sut.handle(.timerFired(now: .seconds(1)))
        _ = sut.handle(.uploadFinished(.delivered(lastSequence: 1), now: .seconds(1)))
        _ = sut.handle(.acknowledged(now: .zero))
        #expect(sut.handle(.uploadFinished(.retryable(reason: "x"), now: .seconds(2))) == [.wake(at: .seconds(3))])
    }

    @Test func backoffIsCappedAtTheMaximum() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        var now = Duration.zero
        var last: [ForwarderStateMachine.Action] = []
        for _ in 0..<20 {
            last = sut.handle(.uploadFinished(.retryable(reason: "x"), now: now))
            if case let .wake(at) = last.first { now = at }
            _ = sut.handle(.timerFired(now: now))
        }
        #expect(last == [.wake(at: now)])
        #expect(sut.handle(.uploadFinished(.retryable(reason: "x"), now: now)) == [.wake(at: now + .seconds(60))])
    }

    @Test func permanentFailureBlocksAndKeepsRetryingAtTheMaximumInterval() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.permanent(reason: "401"), now: .zero))
            == [.reportBlocked(reason: "401"), .wake(at: .seconds(60))])
        #expect(sut.handle(.positionsAvailable) == [])
        #expect(sut.handle(.timerFired(now: .seconds(60))) == [.uploadNextBatch])
    }

    @Test func stoppedMachineIgnoresEverything() {
        var sut = makeSUT()
        _ = sut.handle(.stop)
        #expect(sut.handle(.positionsAvailable) == [])
    }

    @Test func aStopDuringAnUploadAcknowledgesWhatTheServerConfirmedThenStops() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.stop) == [])
        #expect(sut.handle(.uploadFinished(.delivered(lastSequence: 3), now: .zero)) == [.acknowledge(through: 3)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [])
        #expect(sut.state == .stopped)
    }

    @Test func aStopDuringAnUploadAcknowledgesAConfirmedPrefixAndNotTheRest() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.stop)
        #expect(sut.handle(.uploadFinished(.partial(through: 2, rest: .retryable(reason: "reset")), now: .zero))
            == [.acknowledge(through: 2)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [])
        #expect(sut.state == .stopped)
    }

    @Test func aStopDuringAnUploadThatFailsStopsWithoutWaitingToRetry() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.stop)
        #expect(sut.handle(.uploadFinished(.retryable(reason: "reset"), now: .zero)) == [])
        #expect(sut.state == .stopped)
    }

    @Test func nothingNewStartsWhileTheExchangeUnderWayAtTheStopFinishes() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.stop)
        #expect(sut.handle(.positionsAvailable) == [])
        #expect(sut.handle(.connectivity(.mayBeOnline)) == [])
        #expect(sut.handle(.timerFired(now: .seconds(60))) == [])
        #expect(sut.state == .stopping(awaiting: .upload))
    }

    @Test func aStopDuringAnAcknowledgementStopsWhenItReports() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.delivered(lastSequence: 1), now: .zero))
        _ = sut.handle(.stop)
        #expect(sut.handle(.acknowledgeFailed(reason: "disk", now: .zero)) == [])
        #expect(sut.state == .stopped)
    }

    @Test func aStopWhileBackingOffStopsAtOnce() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.retryable(reason: "reset"), now: .zero))
        _ = sut.handle(.stop)
        #expect(sut.state == .stopped)
    }

    @Test func anUploadResultWhileStoppingForAnAcknowledgementIsAProgrammingError() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.delivered(lastSequence: 1), now: .zero))
        _ = sut.handle(.stop)
        let actions = sut.handle(.uploadFinished(.delivered(lastSequence: 1), now: .zero))
        guard case .invalidEvent? = actions.first, actions.count == 1 else {
            Issue.record("not reported as invalid: \(actions)")
            return
        }
        #expect(sut.invalidEvents == 1)
    }

    @Test func aDrainAfterTheStopSendsBatchAfterBatchUntilTheQueueIsEmpty() {
        var sut = makeSUT()
        _ = sut.handle(.stop)
        #expect(sut.handle(.drain) == [.uploadNextBatch])
        #expect(sut.handle(.uploadFinished(.delivered(lastSequence: 2), now: .zero)) == [.acknowledge(through: 2)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [.uploadNextBatch])
        #expect(sut.handle(.uploadFinished(.nothingToSend, now: .zero)) == [.drainFinished(emptied: true)])
    }

    @Test func aDrainEndsAtTheFirstFailureWithoutBackingOff() {
        var sut = makeSUT()
        _ = sut.handle(.drain)
        #expect(sut.handle(.uploadFinished(.retryable(reason: "reset"), now: .zero)) == [.drainFinished(emptied: false)])
        #expect(sut.handle(.positionsAvailable) == [])
    }

    @Test func aDrainAcknowledgesAConfirmedPrefixThenEndsAtTheRest() {
        var sut = makeSUT()
        _ = sut.handle(.drain)
        #expect(sut.handle(.uploadFinished(.partial(through: 4, rest: .rejected(sequence: 5, reason: "bad")), now: .zero)) == [.acknowledge(through: 4)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [.drainFinished(emptied: false)])
    }

    @Test func aDrainWhileAnUploadIsUnderWayIsAProgrammingError() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.drain).count == 1)
        #expect(sut.invalidEvents == 1)
        #expect(sut.state == .uploading(more: false))
    }

    @Test func aConfirmedPrefixIsAcknowledgedBeforeTheRestIsRetried() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.partial(through: 4, rest: .retryable(reason: "reset")), now: .zero)) == [.acknowledge(through: 4)])
        #expect(sut.handle(.acknowledged(now: .seconds(1))) == [.wake(at: .seconds(2))])
        #expect(sut.handle(.timerFired(now: .seconds(2))) == [.uploadNextBatch])
    }

    @Test func theServersRetryAfterIsNeverShortened() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.retryable(reason: "429", after: .seconds(30)), now: .zero)) == [.wake(at: .seconds(30))])
    }

    @Test func aRetryAfterBeyondAnHourIsCappedAtAnHour() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.retryable(reason: "503", after: .seconds(86_400)), now: .zero)) == [.wake(at: .seconds(3600))])
    }

    @Test func aRefusedRecordIsRetriedWithBackoffThenQuarantinedAndTheUploadsGoOn() {
        var sut = ForwarderStateMachine(backoff: Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0), maxRecordAttempts: 3)
        _ = sut.handle(.positionsAvailable)
        var now = Duration.zero
        for _ in 1..<3 {
            let actions = sut.handle(.uploadFinished(.rejected(sequence: 9, reason: "bad lat"), now: now))
            guard case let .wake(at)? = actions.first else { Issue.record("expected a backoff, got \(actions)"); return }
            now = at
            #expect(sut.handle(.timerFired(now: now)) == [.uploadNextBatch])
        }
        #expect(sut.handle(.uploadFinished(.rejected(sequence: 9, reason: "bad lat"), now: now)) == [.quarantine(sequence: 9, reason: "bad lat")])
        #expect(sut.handle(.quarantined) == [.uploadNextBatch])
        #expect(sut.refused == nil)
    }

    @Test func anotherRecordRefusedStartsItsOwnCount() {
        var sut = ForwarderStateMachine(backoff: Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0), maxRecordAttempts: 2)
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.rejected(sequence: 9, reason: "x"), now: .zero))
        _ = sut.handle(.timerFired(now: .seconds(1)))
        #expect(sut.handle(.uploadFinished(.rejected(sequence: 10, reason: "x"), now: .seconds(1))) == [.wake(at: .seconds(3))])
        #expect(sut.refused == .init(sequence: 10, attempts: 1))
    }

    @Test func aRefusedRecordAfterAConfirmedPrefixIsCountedOnceThePrefixIsAcknowledged() {
        var sut = ForwarderStateMachine(backoff: Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0), maxRecordAttempts: 1)
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.partial(through: 8, rest: .rejected(sequence: 9, reason: "x")), now: .zero)) == [.acknowledge(through: 8)])
        #expect(sut.handle(.acknowledged(now: .zero)) == [.quarantine(sequence: 9, reason: "x")])
    }

    @Test func aRefusedConfigurationBlocksTheUplinkAndIsRetriedAtTheMaximumBackoff() {
        var sut = makeSUT()
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.permanent(reason: "401"), now: .zero)) == [.reportBlocked(reason: "401"), .wake(at: .seconds(60))])
        #expect(sut.handle(.positionsAvailable) == [])
        #expect(sut.handle(.timerFired(now: .seconds(60))) == [.uploadNextBatch])
    }

    @Test func whileOfflineRetriesWaitTheLongestBackoffAndTheNetworkComingBackRetriesAtOnce() {
        var sut = makeSUT()
        _ = sut.handle(.connectivity(.offline))
        _ = sut.handle(.positionsAvailable)
        #expect(sut.handle(.uploadFinished(.retryable(reason: "no route"), now: .zero)) == [.wake(at: .seconds(60))])
        #expect(sut.handle(.connectivity(.mayBeOnline)) == [.uploadNextBatch])
        #expect(sut.handle(.uploadFinished(.retryable(reason: "x"), now: .seconds(1))) == [.wake(at: .seconds(3))])
    }
}

extension ForwarderStateMachineTests {
    @Test func anUploadResultWithNoUploadUnderWayIsAProgrammingErrorThatChangesNothing() {
        var sut = ForwarderStateMachine()
        let actions = sut.handle(.uploadFinished(.delivered(lastSequence: 3), now: .zero))
        guard case .invalidEvent? = actions.first, actions.count == 1 else {
            Issue.record("not reported as invalid: \(actions)")
            return
        }
        #expect(sut.state == .idle)
        #expect(sut.invalidEvents == 1)
    }

    @Test func aTimerOutlivedByTheNetworkComingBackDoesNothing() {
        var sut = ForwarderStateMachine(backoff: Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0))
        _ = sut.handle(.positionsAvailable)
        _ = sut.handle(.uploadFinished(.retryable(reason: "down"), now: .zero))
        _ = sut.handle(.connectivity(.mayBeOnline))
        #expect(sut.handle(.timerFired(now: .seconds(1))) == [])
        #expect(sut.invalidEvents == 0)
    }
}
