#if canImport(Glibc)
    import Glibc
#endif
import Testing
import TernCore
import TernReceivers

@testable import TernHardware

/// Receiver standby/backup by command over the serial port.
@Suite(.timeLimit(.minutes(1))) struct CommandPowerSwitchTests {
    @Test func pmtkStandbySleepWritesPMTK161() async throws {
        let port = RecordingSerialPort()
        let sut = try CommandPowerSwitch.pmtkStandby(serialPort: port)
        try await sut.setPower(on: false)
        #expect(port.written == [Array("$PMTK161,0*28\r\n".utf8)])
    }

    @Test func pmtkStandbyWakeWritesBytesTheReceiverAnswers() async throws {
        let port = RecordingSerialPort()
        let sut = try CommandPowerSwitch.pmtkStandby(serialPort: port)
        try await sut.setPower(on: true)
        #expect(port.written == [Array("$PMTK000*32\r\n".utf8)])
    }

    @Test func ubxBackupSleepWritesRXMPMREQ() async throws {
        let port = RecordingSerialPort()
        let sut = try CommandPowerSwitch.ubxBackup(serialPort: port)
        try await sut.setPower(on: false)
        #expect(port.written.first?.prefix(4) == [0xB5, 0x62, 0x02, 0x41])
    }

    @Test func ubxBackupSleepWakesOnUARTActivity() throws {
        let sut = try CommandPowerSwitch.ubxBackup(serialPort: RecordingSerialPort())
        let payload = Array(sut.sleepCommand.bytes.dropFirst(6).dropLast(2))
        #expect(payload.count == 16)
        #expect(payload[12] & 0x08 != 0, "wakeupSources must include uartrx")
    }

    @Test func ubxBackupWakeWritesAnRXEdge() async throws {
        let port = RecordingSerialPort()
        let sut = try CommandPowerSwitch.ubxBackup(serialPort: port)
        try await sut.setPower(on: true)
        #expect(port.written == [[UInt8](repeating: 0xFF, count: 8)])
    }

    @Test func mt3339BackupIsRefusedBecauseOnlyAPowerCycleWakesIt() {
        #expect(throws: CommandPowerSwitchError.cannotWakeOverUART(chipset: MediaTekDriver().chipset, depth: .backup, wake: .powerCycle)) {
            _ = try CommandPowerSwitch(driver: MediaTekDriver(), depth: .backup, serialPort: RecordingSerialPort())
        }
    }

    @Test func l76xBackupErrorPointsToTheL76XMethod() {
        let sut = CommandPowerSwitchError.cannotWakeOverUART(
            chipset: "Quectel L76X (PMTK)", depth: .backup, wake: .forceOnPulse(minimum: .milliseconds(100)))
        #expect(sut.description.contains("power.method = \"l76x\""))
    }

    @Test func chipsetWithoutStandbyIsRefused() {
        #expect(throws: CommandPowerSwitchError.unsupported(chipset: GenericNMEADriver().chipset, depth: .standby)) {
            _ = try CommandPowerSwitch(driver: GenericNMEADriver(), depth: .standby, serialPort: RecordingSerialPort())
        }
    }

    @Test func writeFailureIsThrown() async throws {
        let port = RecordingSerialPort()
        port.failWrites(with: FakeHardwareError.serial)
        let sut = try CommandPowerSwitch.pmtkStandby(serialPort: port)
        await #expect(throws: FakeHardwareError.serial) { try await sut.setPower(on: false) }
    }
}

/// Opening errors say what to do: the chip, the line, the gpio group, who holds the line.
@Suite(.timeLimit(.minutes(1))) struct GPIOOpenErrorTests {
    @Test func missingChipMapsToNoSuchChip() {
        let sut = GPIOPowerSwitch.error(stage: .chip, errno: ENOENT, chip: "gpiochip9", line: .offset(4), holder: "")
        #expect(sut == .noSuchChip(chip: "gpiochip9", line: .offset(4)))
    }

    @Test func missingLineMapsToNoSuchLine() {
        let sut = GPIOPowerSwitch.error(stage: .line, errno: ENOENT, chip: "gpiochip0", line: .name("GPS_EN"), holder: "")
        #expect(sut == .noSuchLine(chip: "gpiochip0", line: .name("GPS_EN")))
    }

    @Test func permissionOnRequestMapsToTheGPIOGroup() {
        let sut = GPIOPowerSwitch.error(stage: .request, errno: EPERM, chip: "gpiochip0", line: .offset(17), holder: "")
        #expect(sut.description.contains("gpio group"))
    }

    @Test func busyLineWithoutAConsumerNameSaysSo() {
        let sut = GPIOError.busy(chip: "gpiochip0", line: .offset(17), holder: "")
        #expect(sut.description.contains("an unnamed consumer"))
    }
}
