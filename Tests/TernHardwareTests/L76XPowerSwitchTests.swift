import Clocks
import Testing
import TernCore
import TernTesting

@testable import TernHardware

/// The Waveshare L76X HAT's two lines, driven through fakes in virtual time.
@Suite(.timeLimit(.minutes(1))) struct L76XPowerSwitchTests {
    struct Harness {
        let clock = TestClock()
        let log: LineLog
        let standby: FakeGPIOLine
        let forceOn: FakeGPIOLine
        let port = RecordingSerialPort()
        let sut: L76XPowerSwitch<TestClock<Duration>>

        init(sleep: Sleep = .backup, pulse: Duration = .milliseconds(150)) {
            log = LineLog(clock: clock)
            standby = FakeGPIOLine("STANDBY", log: log)
            forceOn = FakeGPIOLine("FORCE_ON", log: log)
            sut = L76XPowerSwitch(
                standby: standby, forceOn: forceOn, sleep: sleep == .backup ? .backup(port) : .standby,
                clock: clock, pulse: pulse)
        }

        enum Sleep { case backup, standby }

        /// Powers on in backup mode, advancing virtual time in 10 ms steps until the wake returns.
        func powerOn() async throws {
            try await advancing(clock, by: .milliseconds(10)) { [sut] in try await sut.setPower(on: true) }
        }
    }

    @Test func wakeFromBackupPulsesForceOnForAtLeast100ms() async throws {
        let h = Harness()
        try await h.powerOn()
        let pulse = h.log.of("FORCE_ON")
        #expect(pulse.map(\.active) == [true, false])
        #expect(pulse[1].at - pulse[0].at >= .milliseconds(100))
    }

    @Test func wakeFromBackupRunsTheModuleBeforeThePulse() async throws {
        let h = Harness()
        try await h.powerOn()
        #expect(h.log.all.first?.line == "STANDBY")
        #expect(h.log.all.first?.active == true)
    }

    @Test func pulseShorterThanTheL76XMinimumIsLengthened() {
        let h = Harness(pulse: .milliseconds(20))
        #expect(h.sut.pulse == .milliseconds(100))
    }

    @Test func sleepInBackupModeSendsPMTK225Mode4() async throws {
        let h = Harness()
        try await h.sut.setPower(on: false)
        #expect(h.port.written == [Array("$PMTK225,4*2F\r\n".utf8)])
    }

    @Test func sleepInBackupModeLeavesForceOnLow() async throws {
        let h = Harness()
        try await h.sut.setPower(on: false)
        #expect(h.log.all == [LineChange(line: "FORCE_ON", active: false, at: .zero)])
    }

    @Test func sleepInStandbyModePullsStandbyLow() async throws {
        let h = Harness(sleep: .standby)
        try await h.sut.setPower(on: false)
        #expect(h.log.all == [LineChange(line: "STANDBY", active: false, at: .zero)])
        #expect(h.port.written.isEmpty)
    }

    @Test func wakeInStandbyModeDrivesStandbyHighWithoutAPulse() async throws {
        let h = Harness(sleep: .standby)
        try await h.sut.setPower(on: true)
        #expect(h.log.all == [LineChange(line: "STANDBY", active: true, at: .zero)])
    }

    @Test func pulseEndsEvenWhenTheWakingTaskIsCancelled() async throws {
        let h = Harness()
        let task = Task { try await h.sut.setPower(on: true) }
        #expect(await eventually { h.log.of("FORCE_ON").count == 1 })
        task.cancel()
        #expect(await eventually {
            await h.clock.advance(by: .milliseconds(10))
            return h.log.of("FORCE_ON").map(\.active) == [true, false]
        })
    }

    @Test func lineFailureIsThrown() async throws {
        let h = Harness(sleep: .standby)
        h.standby.fail(with: FakeHardwareError.gpio)
        await #expect(throws: FakeHardwareError.gpio) { try await h.sut.setPower(on: true) }
    }

    @Test func serialFailureOnSleepIsThrown() async throws {
        let h = Harness()
        h.port.failWrites(with: FakeHardwareError.serial)
        await #expect(throws: FakeHardwareError.serial) { try await h.sut.setPower(on: false) }
    }
}
