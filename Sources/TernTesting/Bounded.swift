import Clocks
import Synchronization

/// A wait in a test that ran out of real time: the test fails with this instead of hanging.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "\(what) did not finish within \(limit) of real time" }
}

/// Runs `operation` while moving `clock` forward in steps of `step` until it returns.
///
/// A sleep the operation registers after an advance is still reached (the clock keeps moving), and
/// the wait is bounded: after `limit` of real time the operation is cancelled and `WaitTimedOut` is
/// thrown, even if the operation ignores the cancellation. Use it wherever a test drives a
/// `TestClock` from outside the code under test and then awaits that code: advancing a fixed number
/// of times races the sleeper's registration.
public func advancing<T: Sendable>(
    _ clock: TestClock<Duration>, by step: Duration = .milliseconds(10), within limit: Duration = .seconds(30),
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await bounded(Task(operation: operation), within: limit, what: "an operation driven by a TestClock") {
        await clock.advance(by: step)
    }
}

/// Awaits `task` for at most `limit` of real time. The task is cancelled when the limit passes (then
/// `WaitTimedOut` is thrown) and when the waiting test is cancelled (a test's time limit), so a task
/// that never finishes cannot hold the test process forever, as a bare `await task.value` would.
public func value<T: Sendable>(of task: Task<T, any Error>, within limit: Duration = .seconds(30)) async throws -> T {
    try await bounded(task, within: limit, what: "a task") {}
}

/// Polls `task` every millisecond (running `tick` before each look) without awaiting it, so that a
/// task deaf to cancellation still cannot keep the caller waiting past `limit`.
private func bounded<T: Sendable>(
    _ task: Task<T, any Error>, within limit: Duration, what: String, tick: @Sendable () async -> Void
) async throws -> T {
    let finished = Flag()
    Task {
        _ = try? await task.value
        finished.set()
    }
    let real = ContinuousClock()
    let deadline = real.now.advanced(by: limit)
    do {
        while !finished.isSet {
            guard real.now < deadline else { throw WaitTimedOut(what: what, limit: limit) }
            await tick()
            try await Task.sleep(for: .milliseconds(1))
        }
    } catch {
        task.cancel()
        throw error
    }
    return try await task.value
}

private final class Flag: Sendable {
    private let state = Mutex(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

extension TestClock where Duration == Swift.Duration {
    /// Waits (real time, at most `limit`) until a task sleeps on this clock: advancing before the
    /// sleeper registers moves `now` past it, and a relative sleep registered later is never reached.
    public func sleeperRegistered(within limit: Duration = .seconds(30)) async throws {
        let real = ContinuousClock()
        let deadline = real.now.advanced(by: limit)
        // checkSuspension throws while some sleep is pending on the clock.
        while (try? await checkSuspension()) != nil {
            guard real.now < deadline else { throw WaitTimedOut(what: "a sleep on the TestClock", limit: limit) }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
