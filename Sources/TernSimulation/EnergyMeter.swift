import TernCore

/// Integrates supply current × voltage over the receiver's power states, with the inrush after each
/// power-on, and records the energy of every power cycle (power-on to power-off).
public struct EnergyMeter: Sendable, Hashable {
    public enum PowerState: String, Sendable, Hashable, Codable, CaseIterable {
        case off, acquiring, tracking, standby
    }

    public let energy: ReceiverEnergy
    public let standbyCurrent: Double
    public private(set) var state: PowerState = .off
    public private(set) var since: Double
    /// Millijoules and seconds spent per state (inrush counted with the state it happened in).
    public private(set) var millijoules: [PowerState: Double] = [:]
    public private(set) var seconds: [PowerState: Double] = [:]
    /// Energy of each finished power cycle, millijoules.
    public private(set) var cycles: [Double] = []
    private var poweredAt: Double?
    private var cycleMillijoules = 0.0

    public init(energy: ReceiverEnergy, standbyCurrent: Double = 0, start: Double = 0) {
        self.energy = energy
        self.standbyCurrent = standbyCurrent
        self.since = start
    }

    /// Summed in a fixed order: a dictionary's order differs between instances, and so would the last
    /// bit of the sum (two identical runs compared unequal).
    public var totalMillijoules: Double { PowerState.allCases.reduce(0) { $0 + (millijoules[$1] ?? 0) } }
    public var onSeconds: Double { (seconds[.acquiring] ?? 0) + (seconds[.tracking] ?? 0) }

    public func current(of state: PowerState) -> Double {
        switch state {
        case .off: energy.offCurrent
        case .acquiring: energy.acquisitionCurrent
        case .tracking: energy.trackingCurrent
        case .standby: standbyCurrent
        }
    }

    /// Changes state at `time` (seconds); leaving `.off` starts a power cycle, entering it ends one.
    public mutating func set(_ newState: PowerState, at time: Double) {
        accumulate(to: time)
        if state == .off, newState != .off {
            poweredAt = time
            cycleMillijoules = 0
        } else if state != .off, newState == .off {
            cycles.append(cycleMillijoules)
            poweredAt = nil
        }
        state = newState
    }

    /// Accounts up to `time` without changing state (call at the end of a run).
    public mutating func finish(at time: Double) {
        accumulate(to: time)
        if state != .off {
            cycles.append(cycleMillijoules)
            poweredAt = nil
            state = .off
        }
    }

    private mutating func accumulate(to time: Double) {
        let span = max(0, time - since)
        guard span > 0 else { since = max(since, time); return }
        var milliampereSeconds = current(of: state) * span
        if let on = poweredAt {
            // Inrush: the extra above the state's current during the first `inrushDuration` after power-on.
            let inrushEnd = on + energy.inrushDuration.seconds
            let overlap = max(0, min(time, inrushEnd) - max(since, on))
            milliampereSeconds += max(0, energy.inrushCurrent - current(of: state)) * overlap
        }
        let mj = milliampereSeconds * energy.voltage
        millijoules[state, default: 0] += mj
        seconds[state, default: 0] += span
        if poweredAt != nil { cycleMillijoules += mj }
        since = time
    }
}
