import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Testing

@testable import TernHardware

/// Whether this machine has a GPIO character device (a Pi, or the gpio-sim guest in board/hil).
private let hasGPIOChip: Bool =
    ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).contains { $0.hasPrefix("gpiochip") }

/// A line that is safe to toggle, named by the HIL rig (board/hil): TERN_HIL_GPIO_CHIP / TERN_HIL_GPIO_LINE.
private let hilLine: (chip: String, line: GPIOLine)? = {
    let environment = ProcessInfo.processInfo.environment
    guard let chip = environment["TERN_HIL_GPIO_CHIP"], let line = environment["TERN_HIL_GPIO_LINE"] else {
        return nil
    }
    return (chip, Int(line).map(GPIOLine.offset) ?? .name(line))
}()

/// The gpio-sim sysfs file holding the level of the HIL line (what the simulated receiver sees).
private let hilSimValuePath: String? = ProcessInfo.processInfo.environment["TERN_HIL_GPIO_SIM_VALUE"]

private func hilSimLevel() throws -> String {
    let path = try #require(hilSimValuePath)
    return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite(.timeLimit(.minutes(1))) struct GPIOPowerSwitchTests {
    @Test func libgpiodAPIIsV1OrV2() {
        #expect(["v1", "v2"].contains(GPIOPowerSwitch.libgpiodAPI))
    }

    @Test(.enabled(if: !hasGPIOChip, "this machine has a gpiochip, so gpiochip0 may exist"))
    func openingAMissingChipNamesChipAndLine() {
        #expect(throws: GPIOError.noSuchChip(chip: "gpiochip0", line: .offset(17))) {
            _ = try GPIOPowerSwitch(chip: "gpiochip0", line: .offset(17))
        }
    }

    @Test func openingAMissingNamedChipThrowsNoSuchChip() {
        #expect(throws: GPIOError.noSuchChip(chip: "tern-no-such-chip", line: .name("GPS_POWER"))) {
            _ = try GPIOPowerSwitch(chip: "tern-no-such-chip", line: .name("GPS_POWER"))
        }
    }

    @Test func noSuchChipMessageNamesChipLineAndTheFix() {
        let sut = GPIOError.noSuchChip(chip: "gpiochip9", line: .offset(17))

        #expect(sut.description.contains("'gpiochip9'"))
        #expect(sut.description.contains("line 17"))
        #expect(sut.description.contains("gpiodetect"))
    }

    @Test func noSuchLineMessageNamesChipAndLine() {
        let sut = GPIOError.noSuchLine(chip: "gpiochip0", line: .name("GPS_POWER"))

        #expect(sut.description.contains("line 'GPS_POWER' on gpiochip0"))
    }

    @Test func permissionDeniedMessageNamesDeviceAndGroup() {
        let sut = GPIOError.permissionDenied(chip: "gpiochip0", line: .offset(17))

        #expect(sut.description.contains("permission denied on /dev/gpiochip0"))
        #expect(sut.description.contains("gpio group"))
    }

    @Test func busyMessageNamesTheHolder() {
        let sut = GPIOError.busy(chip: "gpiochip0", line: .offset(17), holder: "gpio-leds")

        #expect(sut.description.hasPrefix("line 17 on gpiochip0 is busy: held by 'gpio-leds'"))
    }

    @Test(arguments: [("gpiochip4", "/dev/gpiochip4"), ("4", "/dev/gpiochip4"), ("/dev/gpiochip1", "/dev/gpiochip1")])
    func devicePathResolvesChipDesignations(chip: String, path: String) {
        #expect(GPIOError.devicePath(chip) == path)
    }

    @Test func errnoEBUSYOnRequestMapsToBusy() {
        let sut = GPIOPowerSwitch.error(
            stage: .request, errno: EBUSY, chip: "gpiochip0", line: .offset(17), holder: "gpio-leds")

        #expect(sut == .busy(chip: "gpiochip0", line: .offset(17), holder: "gpio-leds"))
    }

    @Test func errnoEACCESOnChipMapsToPermissionDenied() {
        let sut = GPIOPowerSwitch.error(
            stage: .chip, errno: EACCES, chip: "gpiochip0", line: .offset(17), holder: "")

        #expect(sut == .permissionDenied(chip: "gpiochip0", line: .offset(17)))
    }

    @Test(.enabled(if: hasGPIOChip, "needs a /dev/gpiochip* (a Pi or the board/hil gpio-sim guest)"))
    func openingAnOutOfRangeOffsetOnARealChipThrowsNoSuchLine() throws {
        let chip = try #require(
            (try FileManager.default.contentsOfDirectory(atPath: "/dev")).filter { $0.hasPrefix("gpiochip") }.sorted()
                .first)

        #expect(throws: GPIOError.noSuchLine(chip: chip, line: .offset(100_000))) {
            _ = try GPIOPowerSwitch(chip: chip, line: .offset(100_000))
        }
    }

    @Test(.enabled(if: hilLine != nil, "needs TERN_HIL_GPIO_CHIP/TERN_HIL_GPIO_LINE naming a line safe to toggle"))
    func switchingAHeldLineOnAndOffSucceeds() async throws {
        let target = try #require(hilLine)
        let sut = try GPIOPowerSwitch(chip: target.chip, line: target.line)

        try await sut.setPower(on: true)
        try await sut.setPower(on: false)
    }

    @Test(.enabled(if: hilLine != nil, "needs TERN_HIL_GPIO_CHIP/TERN_HIL_GPIO_LINE naming a line safe to toggle"))
    func requestingAHeldLineAgainReportsTheHolder() throws {
        let target = try #require(hilLine)
        let holder = try GPIOPowerSwitch(chip: target.chip, line: target.line, consumer: "tern-test-holder")
        defer { holder.close() }

        #expect(throws: GPIOError.busy(chip: target.chip, line: target.line, holder: "tern-test-holder")) {
            _ = try GPIOPowerSwitch(chip: target.chip, line: target.line)
        }
    }

    @Test(.enabled(if: hilLine != nil, "needs TERN_HIL_GPIO_CHIP/TERN_HIL_GPIO_LINE naming a line safe to toggle"))
    func settingPowerAfterCloseThrowsClosed() async throws {
        let target = try #require(hilLine)
        let sut = try GPIOPowerSwitch(chip: target.chip, line: target.line)
        sut.close()

        await #expect(throws: GPIOError.closed(chip: target.chip, line: target.line)) {
            try await sut.setPower(on: true)
        }
    }

    @Test(.enabled(if: hilLine != nil && hilSimValuePath != nil, "needs the board/hil gpio-sim guest"))
    func settingPowerOnDrivesTheLineHigh() async throws {
        let target = try #require(hilLine)
        let sut = try GPIOPowerSwitch(chip: target.chip, line: target.line)
        defer { sut.close() }

        try await sut.setPower(on: true)

        #expect(try hilSimLevel() == "1")
    }

    @Test(.enabled(if: hilLine != nil && hilSimValuePath != nil, "needs the board/hil gpio-sim guest"))
    func settingPowerOnWhenActiveLowDrivesTheLineLow() async throws {
        let target = try #require(hilLine)
        let sut = try GPIOPowerSwitch(chip: target.chip, line: target.line, activeLow: true)
        defer { sut.close() }

        try await sut.setPower(on: true)

        #expect(try hilSimLevel() == "0")
    }

    @Test(.enabled(if: hilLine != nil && hilSimValuePath != nil, "needs the board/hil gpio-sim guest"))
    func openingDrivesTheLineToTheSafeOffLevel() throws {
        let target = try #require(hilLine)
        let sut = try GPIOPowerSwitch(chip: target.chip, line: target.line, activeLow: true)
        defer { sut.close() }

        #expect(try hilSimLevel() == "1")
    }
}
