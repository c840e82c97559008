import Clocks
import Synchronization
import TernTesting
import Testing

/// The bounded waits every test that drives a `TestClock` or awaits a task builds on: they must
/// reach a late sleeper, and they must end (never hang) when the awaited work does not.
@Suite(.timeLimit(.minutes(1)))
struct BoundedTests {
    @Test func advancingReachesASleepRegisteredAfterTheClockMoved() async throws {
        let clock = TestClock()
        let woke = try await advancing(clock) {
            try await Task.sleep(for: .milliseconds(50))  // the clock has moved by now
            // 100 ms: 10 steps of `advancing`, each a megaYield that a loaded machine slows (a
            // 1 s sleep's 100 steps once took over 30 s beside the whole suite on 2 cores).
            try await clock.sleep(for: .milliseconds(100))
            return clock.now
        }
        #expect(woke >= TestClock<Duration>.Instant(offset: .milliseconds(100)))
    }

    @Test func advancingReturnsWhatTheOperationReturns() async throws {
        let clock = TestClock()
        #expect(try await advancing(clock) { 42 } == 42)
    }

    @Test func advancingRethrowsTheOperationsError() async throws {
        let clock = TestClock()
        await #expect(throws: Probe.self) { try await advancing(clock) { throw Probe() } }
    }

    @Test func advancingGivesUpAfterItsLimitEvenIfTheOperationIgnoresCancellation() async throws {
        let clock = TestClock()
        let release = Gate()
        await #expect(throws: WaitTimedOut.self) {
            try await advancing(clock, within: .milliseconds(200)) { await release.wait() }
        }
        release.open()
    }

    @Test func valueOfATaskThatEndsInTimeIsItsValue() async throws {
        let task = Task { () throws -> Int in
            try await Task.sleep(for: .milliseconds(20))
            return 7
        }
        #expect(try await value(of: task) == 7)
    }

    @Test func valueOfATaskThatOutlivesTheLimitThrowsAndCancelsIt() async throws {
        let task = Task { try await Task.sleep(for: .seconds(60)) }
        await #expect(throws: WaitTimedOut.self) { try await value(of: task, within: .milliseconds(100)) }
        #expect(task.isCancelled)
    }

    @Test func cancellingTheWaiterCancelsTheTask() async throws {
        let task = Task { try await Task.sleep(for: .seconds(60)) }
        let waiter = Task { try await value(of: task) }
        try await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(task.isCancelled)
    }

    @Test func sleeperRegisteredWaitsForALateSleeper() async throws {
        let clock = TestClock()
        let sleeper = Task {
            try await Task.sleep(for: .milliseconds(50))
            try await clock.sleep(for: .seconds(1))
        }
        try await clock.sleeperRegistered()
        await clock.advance(by: .seconds(1))
        try await value(of: sleeper)
    }

    @Test func sleeperRegisteredThrowsWhenNobodySleeps() async throws {
        await #expect(throws: WaitTimedOut.self) { try await TestClock().sleeperRegistered(within: .milliseconds(50)) }
    }
}

private struct Probe: Error {}

/// A wait that ignores cancellation until opened: the kind of work a bare `await` would hang on.
private final class Gate: Sendable {
    private let waiters = Mutex<(open: Bool, continuations: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resume = waiters.withLock { state -> Bool in
                if state.open { return true }
                state.continuations.append(continuation)
                return false
            }
            if resume { continuation.resume() }
        }
    }

    func open() {
        let continuations = waiters.withLock { state in
            state.open = true
            defer { state.continuations = [] }
            return state.continuations
        }
        for continuation in continuations { continuation.resume() }
    }
}
