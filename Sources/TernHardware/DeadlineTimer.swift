import Synchronization

/// One resettable deadline on a clock (time since its origin): `schedule(at:)` replaces it and
/// `due()` waits until it passes, following reschedules. Cancellable; no polling.
final class DeadlineTimer: Sendable {
    private struct State {
        var deadline: Duration?
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())
    let now: @Sendable () -> Duration
    private let sleepUntil: @Sendable (Duration) async throws -> Void

    init(clock: some Clock<Duration>) {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleepUntil = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    var deadline: Duration? { state.withLock { $0.deadline } }

    /// Sets (or, with nil, clears) the deadline.
    func schedule(at deadline: Duration?) {
        let waiters = state.withLock { state in
            state.deadline = deadline
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the deadline passes and clears it; returns the deadline. Throws `CancellationError`.
    func due() async throws -> Duration {
        while true {
            try Task.checkCancellation()
            let (deadline, generation) = state.withLock { ($0.deadline, $0.generation) }
            guard let deadline else {
                await waitForChange(since: generation)
                continue
            }
            let reached = await withTaskGroup(of: Bool.self) { group in
                group.addTask { [sleepUntil] in (try? await sleepUntil(deadline)) != nil }
                group.addTask { await self.waitForChange(since: generation); return false }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            let current = reached && state.withLock { state in
                guard state.generation == generation else { return false }
                state.deadline = nil
                return true
            }
            if current { return deadline }
        }
    }

    private func waitForChange(since generation: Int) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
