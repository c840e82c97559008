import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct GroupCommitTests {
    private func makeSUT(delay: Int = 1, positions: Int = 3, maxPending: Int = 100) -> GroupCommit {
        GroupCommit(
            window: .init(maxDelay: .seconds(delay), maxPositions: positions),
            retry: Backoff(base: .seconds(1), maximum: .seconds(8), jitter: 0), maxPending: maxPending)
    }

    private let a = Position.fixture(seconds: 0), b = Position.fixture(seconds: 1), c = Position.fixture(seconds: 2)

    @Test func theFirstPositionWaitsForTheWindow() {
        var sut = makeSUT()
        #expect(sut.accepted(a, now: .seconds(10)) == [.wake(at: .seconds(11))])
    }

    @Test func positionsAcceptedWithinTheWindowAreWrittenTogetherWhenItEnds() {
        var sut = makeSUT()
        _ = sut.accepted(a, now: .seconds(10))
        #expect(sut.accepted(b, now: .milliseconds(10_500)) == [.wake(at: .seconds(11))])
        #expect(sut.timerFired(now: .seconds(11)) == [.write([a, b]), .wake(at: nil)])
    }

    @Test func aFullWindowIsWrittenAtOnce() {
        var sut = makeSUT(positions: 2)
        _ = sut.accepted(a, now: .zero)
        #expect(sut.accepted(b, now: .zero) == [.write([a, b]), .wake(at: nil)])
    }

    @Test func theImmediateWindowWritesEveryPositionAsItComes() {
        var sut = GroupCommit(window: .immediate)
        #expect(sut.accepted(a, now: .zero) == [.write([a]), .wake(at: nil)])
    }

    @Test func positionsAcceptedDuringAWriteWaitForTheNextOne() {
        var sut = makeSUT(positions: 1)
        _ = sut.accepted(a, now: .zero)
        #expect(sut.accepted(b, now: .zero) == [])
        #expect(sut.written(now: .zero) == [.write([b]), .wake(at: nil)])
    }

    @Test func aFailedWriteKeepsThePositionsAndRetriesAfterABackoff() {
        var sut = makeSUT(positions: 1)
        _ = sut.accepted(a, now: .zero)
        #expect(sut.writeFailed(now: .seconds(5)) == [.wake(at: .seconds(6))])
        #expect(sut.pending == [a])
        #expect(sut.timerFired(now: .seconds(6)) == [.write([a]), .wake(at: nil)])
        #expect(sut.writeFailed(now: .seconds(6)) == [.wake(at: .seconds(8))])
    }

    @Test func aNewPositionDoesNotBypassTheRetryBackoff() {
        var sut = makeSUT(positions: 1)
        _ = sut.accepted(a, now: .zero)
        _ = sut.writeFailed(now: .zero)
        #expect(sut.accepted(b, now: .milliseconds(100)) == [.wake(at: .seconds(1))])
    }

    @Test func aSuccessfulWriteEndsTheBackoff() {
        var sut = makeSUT(positions: 1)
        _ = sut.accepted(a, now: .zero)
        _ = sut.writeFailed(now: .zero)
        _ = sut.timerFired(now: .seconds(1))
        _ = sut.written(now: .seconds(1))
        #expect(sut.failures == 0)
        #expect(sut.accepted(b, now: .seconds(2)) == [.write([b]), .wake(at: nil)])
    }

    @Test func shutdownWritesWhatWaitsWhateverTheWindow() {
        var sut = makeSUT(delay: 60, positions: 100)
        _ = sut.accepted(a, now: .zero)
        _ = sut.accepted(b, now: .zero)
        #expect(sut.shutdown() == [.write([a, b])])
    }

    @Test func beyondMaxPendingTheOldestUnwrittenPositionsAreDroppedAndReported() {
        var sut = makeSUT(positions: 1, maxPending: 2)
        _ = sut.accepted(a, now: .zero)  // in flight
        _ = sut.writeFailed(now: .zero)
        _ = sut.accepted(b, now: .zero)
        #expect(sut.accepted(c, now: .zero).first == .dropped(1))
        #expect(sut.pending == [b, c])
    }
}
