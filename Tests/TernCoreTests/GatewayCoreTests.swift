import Foundation
import Testing
import TernCore
import TernTesting

/// The gateway's pure core: what the daemon's shell and the simulator both perform.
@Suite struct GatewayCoreTests {
    /// The shipped filter but for the warm-up (each test's first fix is the one it follows); a fixed
    /// policy of one fix a minute (its decisions are simple to follow).
    private func makeSUT(commitWindow: GroupCommit.Window = GroupCommit.Window()) -> GatewayCore {
        GatewayCore(
            scheduler: FixScheduler(options: .init(policy: .fixed(interval: .seconds(60)))),
            filter: StandardLocationFilter(options: .init(warmUp: .zero)), commitWindow: commitWindow)
    }

    /// Starts the core and reports the power-on as done.
    private func started(_ sut: inout GatewayCore) {
        #expect(sut.start(now: .zero).contains(.powerOn))
        sut.powerSwitched(on: true, now: .zero)
    }

    private func writes(_ actions: [GatewayCore.Action]) -> [[Position]] {
        actions.compactMap { if case let .write(positions) = $0 { positions } else { nil } }
    }

    @Test func theReceiverIsSwitchedOffBeforeTheAcceptedPositionIsWritten() throws {
        var sut = makeSUT(commitWindow: .immediate)
        started(&sut)
        let fix = Fix.fixture(seconds: 2)
        let actions = sut.fixReceived(fix, now: .seconds(2))
        let off = actions.firstIndex(of: .powerOff)
        let write = actions.firstIndex { if case let .write(positions) = $0 { positions.map(\.fix) == [fix] } else { false } }
        #expect(Array(actions.prefix(2)) == [.trustedTime(fix), .accepted(fix)])
        let order = try #require(off.flatMap { off in write.map { (off, $0) } })
        #expect(order.0 < order.1)
    }

    @Test func acceptedPositionsWaitForTheCommitWindowThenAreWrittenTogether() {
        var sut = makeSUT()
        started(&sut)
        let actions = sut.fixReceived(.fixture(seconds: 2), now: .seconds(2))
        #expect(writes(actions).isEmpty)
        #expect(actions.contains(.commitWake(at: .seconds(3))))
        #expect(sut.pendingWrites == 1)
        #expect(writes(sut.commitTimerFired(now: .seconds(3))).map(\.count) == [1])
    }

    @Test func aWrittenBatchIsCountedAndNothingWaits() {
        var sut = makeSUT(commitWindow: .immediate)
        started(&sut)
        _ = sut.fixReceived(.fixture(seconds: 2), now: .seconds(2))
        _ = sut.written(EnqueueResult(stored: 1), now: .seconds(2))
        #expect(sut.counters.enqueued == 1)
        #expect(sut.status(now: .seconds(2)).pendingWrites == 0)
    }

    @Test func aFixMeasuredBeforeThePowerOnNeverReachesTheScheduler() {
        var sut = makeSUT()
        let powerOn = Date(timeIntervalSince1970: Fix.fixture(seconds: 100).time.timeIntervalSince1970)
        _ = sut.start(now: .zero)
        sut.powerSwitched(on: true, now: .zero, synchronisedTime: powerOn)
        let leftover = Fix.fixture(seconds: 40)
        #expect(sut.fixReceived(leftover, now: .seconds(1)) == [.note(.staleFix(leftover, poweredOnAt: powerOn))])
        #expect(sut.counters.staleFixes == 1)
        #expect(sut.counters.fixesAccepted == 0)
    }

    @Test func aUsableFixMeasuredAfterThePowerOnOffersItsTimeBeforeAnythingElse() {
        var sut = makeSUT()
        started(&sut)
        let fix = Fix.fixture(seconds: 2)
        #expect(sut.fixReceived(fix, now: .seconds(2)).first == .trustedTime(fix))
    }

    @Test func aFixWhoseDateTheSystemClockContradictsOffersNoTime() {
        var sut = makeSUT()
        started(&sut)
        var fix = Fix.fixture(seconds: 2)
        fix.timeUntrusted = true
        #expect(!sut.fixReceived(fix, now: .seconds(2)).contains(.trustedTime(fix)))
    }

    @Test func aFixTheSynchronisedClockContradictsOffersNoTime() {
        var sut = makeSUT()
        started(&sut)
        let fix = Fix.fixture(seconds: 2)
        let actions = sut.fixReceived(fix, now: .seconds(2), synchronisedTime: fix.time.addingTimeInterval(-60))
        #expect(!actions.contains(.trustedTime(fix)))
    }

    @Test func anEpochWithoutAFixOffersNoTime() {
        var sut = makeSUT()
        started(&sut)
        let acquiring = Fix.noFix(time: Fix.fixture(seconds: 2).time, satellitesHeard: 3)
        #expect(!sut.fixReceived(acquiring, now: .seconds(2)).contains(.trustedTime(acquiring)))
    }

    @Test func aFixWhileTheSchedulerHasTheReceiverOffIsUnwanted() {
        var sut = makeSUT()
        #expect(sut.fixReceived(.fixture(seconds: 1), now: .seconds(1)).isEmpty)
        #expect(sut.counters.fixesUnwanted == 1)
    }

    @Test func aRejectedFixIsNotedAndTheReceiverStaysOnForTheNext() {
        var sut = makeSUT()
        started(&sut)
        let actions = sut.fixReceived(.fixture(seconds: 2, accuracy: 80), now: .seconds(2))
        #expect(actions.contains { if case .note(.rejected) = $0 { true } else { false } })
        #expect(!actions.contains(.powerOff))
        #expect(sut.counters.rejections.values.reduce(0, +) == 1)
    }

    @Test func shutdownWritesWhatWaitsAndTheFixThinningHolds() {
        var sut = GatewayCore(
            scheduler: FixScheduler(options: .init(policy: .alwaysOn)), filter: StandardLocationFilter(options: .init(warmUp: .zero)),
            commitWindow: GroupCommit.Window(maxDelay: .seconds(60), maxPositions: 100))
        started(&sut)
        // A parked receiver (past any warm-up): thinning keeps the first fix and holds the latest.
        for second in 1...5 { _ = sut.fixReceived(.fixture(seconds: Double(second)), now: .seconds(Double(second))) }
        let written = writes(sut.shutdownWrites(now: .seconds(6))).flatMap { $0 }.map(\.fix.time)
        #expect(written == [Fix.fixture(seconds: 1).time, Fix.fixture(seconds: 5).time])
    }

    @Test func theFixThinningHoldsIsWrittenAtShutdownWhenItsWindowIsDueAtOnce() {
        // An immediate window (`commit_interval = 0`): the held fix's write is due the moment it is
        // accepted; the shutdown must hand that write over, not start it and drop it.
        var sut = GatewayCore(
            scheduler: FixScheduler(options: .init(policy: .alwaysOn)), filter: StandardLocationFilter(), commitWindow: .immediate)
        started(&sut)
        for second in 1...5 {
            let actions = sut.fixReceived(.fixture(seconds: Double(second)), now: .seconds(Double(second)))
            for batch in writes(actions) { _ = sut.written(EnqueueResult(stored: batch.count), now: .seconds(Double(second))) }
        }
        let written = writes(sut.shutdownWrites(now: .seconds(6))).flatMap { $0 }.map(\.fix.time)
        #expect(written == [Fix.fixture(seconds: 5).time])
    }

    @Test func stopSwitchesTheReceiverOffAndCancelsTheWakeUp() {
        var sut = makeSUT()
        started(&sut)
        let actions = sut.stop(now: .seconds(5))
        #expect(actions.contains(.powerOff))
        #expect(actions.last == .wake(at: nil))
    }
}
