import Synchronization
import TernCore

/// The simulated board's receiver supply: the simulated GPS listens to it as a real module would.
public final class SimulatedPowerSwitch: PowerSwitch {
    private let state = Mutex<(on: Bool, changes: Int)>((false, 0))

    public init() {}

    public var isOn: Bool { state.withLock { $0.on } }
    /// How many times the supply was switched on.
    public var powerOns: Int { state.withLock { $0.changes } }

    public func setPower(on: Bool) async throws {
        state.withLock { s in
            if on && !s.on { s.changes += 1 }
            s.on = on
        }
    }
}
