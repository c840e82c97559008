import TernCore
import TernReceivers

/// The Waveshare L76X GPS HAT (Quectel L76X): STANDBY on BCM4 (high = run) and FORCE_ON on BCM17.
///
/// - `.backup`: off sends `$PMTK225,4` (perpetual backup, lowest current, ephemeris kept); on drives
///   FORCE_ON high for at least 100 ms (the L76X's minimum) and back low. STANDBY stays high.
/// - `.standby`: off pulls STANDBY low, on drives it high. FORCE_ON stays low.
public final class L76XPowerSwitch<C: Clock>: PowerSwitch where C.Duration == Duration {
    public enum Sleep: Sendable {
        /// PMTK225,4 written to this port; woken by a FORCE_ON pulse.
        case backup(any SerialPort)
        case standby
    }

    private let standbyLine: any GPIOLineDriver
    private let forceOnLine: any GPIOLineDriver
    private let sleep: Sleep
    private let clock: C
    /// How long FORCE_ON is held high to leave backup.
    public let pulse: Duration

    /// - Parameter pulse: FORCE_ON high time; at least the driver's minimum (100 ms), default 150 ms.
    public init(
        standby: any GPIOLineDriver, forceOn: any GPIOLineDriver, sleep: Sleep, clock: C,
        pulse: Duration = .milliseconds(150)
    ) {
        self.standbyLine = standby
        self.forceOnLine = forceOn
        self.sleep = sleep
        self.clock = clock
        let minimum: Duration =
            if case let .forceOnPulse(minimum) = Self.driver.backupWake { minimum } else { .milliseconds(100) }
        self.pulse = max(pulse, minimum)
    }

    private static var driver: MediaTekDriver { MediaTekDriver(model: .quectelL76X) }

    public func setPower(on: Bool) async throws {
        switch (sleep, on) {
        case (.standby, _):
            try standbyLine.set(active: on)
        case (.backup, true):
            try standbyLine.set(active: true)
            try await pulseForceOn()
        case let (.backup(port), false):
            try forceOnLine.set(active: false)
            try await port.write(Self.driver.backup().bytes)
        }
    }

    /// FORCE_ON high for `pulse`, then low — also when the task is cancelled meanwhile, so that the
    /// module can enter backup again.
    private func pulseForceOn() async throws {
        try forceOnLine.set(active: true)
        let (clock, pulse) = (clock, pulse)
        await Task { try? await clock.sleep(for: pulse) }.value
        try forceOnLine.set(active: false)
    }
}
