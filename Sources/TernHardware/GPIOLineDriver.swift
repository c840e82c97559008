/// One GPIO output line, driven to its active or inactive level. The seam that multi-line power
/// methods (`L76XPowerSwitch`) are built on; `GPIOPowerSwitch` is the libgpiod implementation.
public protocol GPIOLineDriver: Sendable {
    /// Drives the line: `true` is the active level (high, or low when the line is active-low).
    func set(active: Bool) throws
}

extension GPIOPowerSwitch: GPIOLineDriver {
    public func set(active: Bool) throws {
        try set(on: active)
    }
}
