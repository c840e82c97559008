import Clocks
import Foundation
import Testing
import TernCore
import TernNMEA
import TernSimulation
import TernTesting

#if canImport(Glibc)
import Glibc
#endif

/// The simulated GPS writes into a real PTY; these tests read its slave side as Tern's serial adapter would.
@Suite(.timeLimit(.minutes(3))) struct SimulatedGPSTests {
    /// A simulated GPS on a virtual clock, and what it wrote, read from its PTY's slave side.
    private struct Rig {
        let power = SimulatedPowerSwitch()
        let clock = TestClock()
        let sut: SimulatedGPS
        let fd: Int32

        init(poweredOn: Bool = true, options: SimulatedGPS.Options = .init()) async throws {
            if poweredOn { try await power.setPower(on: true) }
            sut = try SimulatedGPS(power: power, options: options)
            fd = open(sut.devicePath, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        }

        /// Runs the GPS for `seconds` virtual seconds, each one's cycle written out before the next;
        /// `at` is called at second + 0.9 (after that second's cycle) and may switch power.
        func run(seconds: Int, at: (Int) async throws -> Void = { _ in }) async throws {
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [sut, clock] in try await sut.run(clock: clock, from: start) }
                for second in 1...seconds {
                    await clock.advance(by: second == 1 ? .seconds(1) : .milliseconds(100))
                    #expect(await nudge { sut.stats.ticks == second })
                    await clock.advance(by: .milliseconds(900))
                    #expect(await nudge { sut.stats.cyclesWritten == sut.stats.epochs })
                    try await at(second)
                }
                group.cancelAll()
            }
        }

        /// Waits for `condition`, releasing a sleep the TestClock parked at the current instant.
        func nudge(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
            await eventually {
                await clock.advance(by: .zero)
                return condition()
            }
        }

        /// Everything written so far, framed.
        func sentences() -> [NMEASentence] {
            var framer = NMEAFramer()
            return framer.append(bytes())
        }

        func bytes() -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var all: [UInt8] = []
            // The PTY hands bytes to the reading side asynchronously: read until it stays quiet for 200 ms.
            var readable = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while poll(&readable, 1, 200) > 0 {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                all += buffer[0..<n]
            }
            return all
        }

        func fixes() -> [Fix] {
            let decoder = NMEADecoder(context: NMEADecodingContext(referenceDate: { Date(timeIntervalSince1970: 1_795_219_200) }))
            var assembler = NMEAFixAssembler()
            var fixes = sentences().flatMap { sentence in (try? decoder.decode(sentence)).map { Array(assembler.add($0)) } ?? [] }
            if let last = assembler.flush() { fixes.append(last) }
            return fixes
        }

        func close() {
            Glibc.close(fd)
            withExtendedLifetime(sut) {}  // closing the PTY's master side would discard what is unread
        }
    }

    @Test func writesNothingWhilePoweredOff() async throws {
        let rig = try await Rig(poweredOn: false)
        defer { rig.close() }
        try await rig.run(seconds: 10)
        #expect(rig.bytes().isEmpty)
    }

    @Test func writesAnMT3339CycleEverySecondWhilePowered() async throws {
        let rig = try await Rig()
        defer { rig.close() }
        try await rig.run(seconds: 10)
        let types = rig.sentences().map(\.type)
        for type in ["GGA", "GSA", "RMC", "VTG"] { #expect(types.filter { $0 == type }.count == 10, "\(type)") }
        #expect(types.last == "VTG")
    }

    @Test func coldStartReportsNoFixUntilTheTimeToFirstFix() async throws {
        let rig = try await Rig(options: .init(fixedTTFF: 20))
        defer { rig.close() }
        try await rig.run(seconds: 25)
        #expect(rig.sut.stats.coldStarts == 1)
        #expect(rig.fixes().map(\.time) == (20...25).map { Date(timeIntervalSince1970: 1_795_219_200 + Double($0)) })
        #expect(rig.sut.stats.epochs == 25)
    }

    @Test func firstFixesAreNoisierThanLaterOnes() async throws {
        let rig = try await Rig(options: .init(fixedTTFF: 1))
        defer { rig.close() }
        try await rig.run(seconds: 8)
        let fixes = rig.fixes()
        #expect(fixes.count == 8)
        #expect((fixes.first?.hdop ?? 0) > (fixes.last?.hdop ?? 99))
    }

    @Test func stopsWritingWhenPoweredOff() async throws {
        let rig = try await Rig(options: .init(fixedTTFF: 1))
        defer { rig.close() }
        try await rig.run(seconds: 20) { second in if second == 5 { try await rig.power.setPower(on: false) } }
        #expect(rig.sut.stats.epochs == 5)
    }

    @Test func aPowerOffMidCycleCutsTheCycleMidSentence() async throws {
        let rig = try await Rig(options: .init(fixedTTFF: 1))
        defer { rig.close() }
        let start = rig.clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [sut = rig.sut, clock = rig.clock] in try await sut.run(clock: clock, from: start) }
            await rig.clock.advance(by: .seconds(1))
            #expect(await rig.nudge { rig.sut.stats.ticks == 1 })
            // 100 ms into the cycle: about 96 bytes at 9600 baud, in the middle of its second sentence.
            await rig.clock.advance(by: .milliseconds(100))
            try await rig.power.setPower(on: false)
            await rig.clock.advance(by: .milliseconds(900))
            #expect(await rig.nudge { rig.sut.stats.cyclesWritten == 1 })
            group.cancelAll()
        }
        let bytes = rig.bytes()
        #expect(rig.sut.stats.epochsCut == 1)
        #expect(bytes.count == 96)
        #expect(bytes.last != UInt8(ascii: "\n"))
    }

    @Test func aRestartAfterAShortPowerOffIsHotAndTakesTheModelsTime() async throws {
        let rig = try await Rig()
        defer { rig.close() }
        try await rig.run(seconds: 60) { second in
            if second == 40 { try await rig.power.setPower(on: false) }
            if second == 45 { try await rig.power.setPower(on: true) }
        }
        let model = ReceiverModel.mt3339
        let hot = model.ttff(.hot, powerOn: 1, seed: 1)
        // Powered on at 45.9 s: the first fix is the first whole second at least a hot start later.
        let first = (45.9 + hot).rounded(.up)
        #expect(rig.sut.stats.coldStarts == 1 && rig.sut.stats.hotStarts == 1)
        #expect(rig.fixes().first { $0.time.timeIntervalSince1970 > 1_795_219_200 + 41 }?.time == Date(timeIntervalSince1970: 1_795_219_200 + first))
    }
}
