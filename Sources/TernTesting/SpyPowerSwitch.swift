import Synchronization
import TernCore

/// Records every power change; can be told to fail.
public final class SpyPowerSwitch: PowerSwitch {
    private let state = Mutex<(calls: [Bool], failure: (any Error)?)>(([], nil))

    public init() {}

    /// Every `setPower(on:)` argument, in order.
    public var calls: [Bool] { state.withLock { $0.calls } }
    public var isOn: Bool { calls.last ?? false }

    public func failNext(with error: (any Error)?) { state.withLock { $0.failure = error } }

    public func setPower(on: Bool) async throws {
        let failure: (any Error)? = state.withLock { s in
            defer { s.failure = nil }
            if s.failure == nil { s.calls.append(on) }
            return s.failure
        }
        if let failure { throw failure }
    }
}
