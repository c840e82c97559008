import Synchronization
import TernCore

/// The simulated board's receiver supply: the simulated GPS listens to it as a real module would.
public final class SimulatedPowerSwitch: PowerSwitch {
    private struct State {
        var on = false
        var changes = 0
        var observers: [@Sendable (Bool) -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var isOn: Bool { state.withLock { $0.on } }
    /// How many times the supply was switched on.
    public var powerOns: Int { state.withLock { $0.changes } }

    /// Calls `observer` with every change of the supply, at the moment it happens.
    public func observe(_ observer: @escaping @Sendable (Bool) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    public func setPower(on: Bool) async throws {
        let observers = state.withLock { s -> [@Sendable (Bool) -> Void] in
            guard s.on != on else { return [] }
            if on { s.changes += 1 }
            s.on = on
            return s.observers
        }
        for observer in observers { observer(on) }
    }
}
