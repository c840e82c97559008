import Dispatch
import Glibc
import Synchronization

/// One wait for a file descriptor to become readable or writable, on a `DispatchSource`.
///
/// Owns `fd` (a `dup` of the port's descriptor) and closes it in the source's cancel handler,
/// so the port can close its own descriptor at any time without racing the event loop.
/// Resumes its waiter exactly once: when the descriptor is ready (or hung up), on task
/// cancellation (`CancellationError`), or when the port closes (`finish(.failure(.closed))`).
final class SerialReadinessWait: Sendable {
    enum Direction { case read, write }

    /// Dispatch sources are thread-safe; Linux's `DispatchSourceProtocol` just lacks the annotation.
    private nonisolated(unsafe) let source: any DispatchSourceProtocol
    private let state = Mutex<State>(State())

    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var outcome: Result<Void, any Error>?
    }

    init(fd: Int32, direction: Direction, queue: DispatchQueue) {
        let source: any DispatchSourceProtocol =
            switch direction {
            case .read: DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            case .write: DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            }
        self.source = source
        source.setCancelHandler { _ = Glibc.close(fd) }
        source.setEventHandler { [weak self] in self?.finish(.success(())) }
        source.activate()
    }

    deinit {
        source.cancel()
    }

    /// Suspends until the descriptor is ready; throws `CancellationError` or the error given to `finish`.
    func wait() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let early: Result<Void, any Error>? = state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    state.continuation = continuation
                    return nil
                }
                if let early { continuation.resume(with: early) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    /// Ends the wait with `outcome` (the first call wins) and releases the descriptor.
    func finish(_ outcome: Result<Void, any Error>) {
        let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        source.cancel()
        continuation?.resume(with: outcome)
    }
}
