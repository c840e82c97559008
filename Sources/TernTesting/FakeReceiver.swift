import Synchronization
import TernCore

/// A receiver driven by the test: records power calls, emits the fixes the test gives it.
public final class FakeReceiver: GPSReceiver {
    public enum Call: Sendable, Equatable { case powerOn, powerOff }

    private let stream: AsyncThrowingStream<Fix, any Error>
    private let continuation: AsyncThrowingStream<Fix, any Error>.Continuation
    private let recorded = Mutex<[Call]>([])

    public init() {
        (stream, continuation) = AsyncThrowingStream.makeStream()
    }

    public var calls: [Call] { recorded.withLock { $0 } }
    public var isPowered: Bool { calls.last == .powerOn }

    /// Like a real port's write, a power call from a cancelled task throws `CancellationError` and
    /// switches nothing.
    public func powerOn() async throws {
        try Task.checkCancellation()
        recorded.withLock { $0.append(.powerOn) }
    }

    public func powerOff() async throws {
        try Task.checkCancellation()
        if holdsPowerOff.withLock({ $0 }) {
            // Like a write to a UART that has gone away: waits (30 s at most, so that a test fails
            // rather than hangs) until cancelled.
            isHolding.withLock { $0 = true }
            defer { isHolding.withLock { $0 = false } }
            try await Task.sleep(for: .seconds(30))
        }
        recorded.withLock { $0.append(.powerOff) }
    }

    /// From now on a power-off waits until its task is cancelled, and then switches nothing.
    public func holdPowerOff() { holdsPowerOff.withLock { $0 = true } }
    private let holdsPowerOff = Mutex(false)
    /// Whether a held power-off is waiting now.
    public var isHoldingPowerOff: Bool { isHolding.withLock { $0 } }
    private let isHolding = Mutex(false)
    public func fixes() -> AsyncThrowingStream<Fix, any Error> { stream }

    public func emit(_ fix: Fix) { continuation.yield(fix) }
    public func finish(throwing error: (any Error)? = nil) { continuation.finish(throwing: error) }
}
