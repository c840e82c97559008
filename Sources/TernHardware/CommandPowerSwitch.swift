import TernCore
import TernReceivers

/// Sleeps and wakes the receiver by command over its serial port, for HATs without a supply
/// switch: MediaTek `$PMTK161,0` standby or u-blox RXM-PMREQ backup, each woken by UART activity.
/// The bytes and the wake method come from the chipset's `ReceiverDriver`.
public struct CommandPowerSwitch: PowerSwitch {
    public enum Depth: Sendable, Hashable {
        /// The driver's `standby()`.
        case standby
        /// The driver's `backup()`.
        case backup
    }

    /// Written on power-off.
    public let sleepCommand: ReceiverCommand
    /// Written on power-on; nil when the receiver needs nothing to wake.
    public let wakeCommand: ReceiverCommand?
    private let serialPort: any SerialPort

    /// Fails when the chipset lacks the command or cannot be woken over the UART from that depth.
    public init(driver: any ReceiverDriver, depth: Depth, serialPort: any SerialPort) throws(CommandPowerSwitchError) {
        let wakeMethod = depth == .standby ? driver.standbyWake : driver.backupWake
        do {
            sleepCommand = try depth == .standby ? driver.standby() : driver.backup()
            switch wakeMethod {
            case .anyByte: wakeCommand = try driver.wake()
            case .none: wakeCommand = nil
            case .forceOnPulse, .powerCycle:
                throw CommandPowerSwitchError.cannotWakeOverUART(chipset: driver.chipset, depth: depth, wake: wakeMethod)
            }
        } catch let error as CommandPowerSwitchError {
            throw error
        } catch {
            throw .unsupported(chipset: driver.chipset, depth: depth)
        }
        self.serialPort = serialPort
    }

    /// `power.method = "pmtk-standby"`: MT3339/L76X `$PMTK161,0`, woken by a PMTK000 (any byte).
    public static func pmtkStandby(serialPort: any SerialPort) throws(CommandPowerSwitchError) -> CommandPowerSwitch {
        try CommandPowerSwitch(driver: MediaTekDriver(), depth: .standby, serialPort: serialPort)
    }

    /// `power.method = "ubx-backup"`: u-blox RXM-PMREQ backup, woken by 0xFF bytes on UART RX.
    public static func ubxBackup(serialPort: any SerialPort) throws(CommandPowerSwitchError) -> CommandPowerSwitch {
        try CommandPowerSwitch(driver: UBloxDriver(), depth: .backup, serialPort: serialPort)
    }

    public func setPower(on: Bool) async throws {
        if on {
            if let wakeCommand { try await serialPort.write(wakeCommand.bytes) }
        } else {
            try await serialPort.write(sleepCommand.bytes)
        }
    }
}

/// Why a receiver cannot be slept and woken by command; says which power method to use instead.
public enum CommandPowerSwitchError: Error, Hashable, CustomStringConvertible {
    case unsupported(chipset: String, depth: CommandPowerSwitch.Depth)
    case cannotWakeOverUART(chipset: String, depth: CommandPowerSwitch.Depth, wake: WakeMethod)

    public var description: String {
        switch self {
        case let .unsupported(chipset, depth):
            "\(chipset) has no \(depth) command: use power.method = \"gpio\" (a supply switch) or \"none\""
        case let .cannotWakeOverUART(chipset, depth, wake):
            "\(chipset) leaves \(depth) only by "
                + (wake == .powerCycle ? "a power cycle" : "a FORCE_ON pulse")
                + ", not by UART activity: use power.method = "
                + (wake == .powerCycle ? "\"gpio\" (a supply switch)" : "\"l76x\"")
        }
    }
}
