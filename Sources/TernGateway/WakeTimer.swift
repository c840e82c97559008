import Synchronization

/// One resettable wake-up on a clock, for the shells of the state machines: `schedule(at:)`
/// replaces the pending deadline; `run` calls `fire` each time a deadline passes.
/// Structured: `run` lives in the caller's task group and ends when that task is cancelled.
public final class WakeTimer<C: Clock>: Sendable where C.Duration == Duration {
    private struct State {
        var deadline: C.Instant?
        var generation = 0
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let clock: C
    private let state = Mutex(State())

    public init(clock: C) { self.clock = clock }

    /// Sets (or, with nil, clears) the next deadline.
    public func schedule(at deadline: C.Instant?) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.deadline = deadline
            s.generation += 1
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    public var deadline: C.Instant? { state.withLock { $0.deadline } }

    /// Runs until the task is cancelled.
    public func run(_ fire: @Sendable (C.Instant) async -> Void) async {
        while !Task.isCancelled {
            let (deadline, generation) = state.withLock { ($0.deadline, $0.generation) }
            guard let deadline else {
                await waitForChange(since: generation)
                continue
            }
            let reached = await withTaskGroup(of: Bool.self) { group in
                group.addTask { [clock] in (try? await clock.sleep(until: deadline, tolerance: nil)) != nil }
                group.addTask { await self.waitForChange(since: generation); return false }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            guard reached else { continue }
            let current = state.withLock { s -> Bool in
                guard s.generation == generation else { return false }
                s.deadline = nil
                return true
            }
            if current { await fire(deadline) }
        }
    }

    private func waitForChange(since generation: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { s -> Bool in
                    if s.generation != generation || Task.isCancelled { return true }
                    s.waiter?.resume()
                    s.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume()
        }
    }
}
