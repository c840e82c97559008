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
@Suite struct SimulatedGPSTests {
    /// Runs the simulated GPS for `seconds` of virtual time and returns what it wrote.
    private func run(
        _ sut: SimulatedGPS, seconds: Int, power: SimulatedPowerSwitch, switchOffAfter: Int? = nil
    ) async throws -> [NMEASentence] {
        let fd = open(sut.devicePath, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        #expect(fd >= 0, "cannot open \(sut.devicePath)")
        defer { close(fd) }
        let clock = TestClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sut.run(clock: clock, from: start) }
            // One virtual second at a time, each handled before the next: deterministic under any load.
            for second in 1...seconds {
                await clock.advance(by: .seconds(1))
                // TestClock parks a sleep whose deadline equals "now" until the next advance: if the
                // GPS's loop asks for this second only after the advance, a zero advance releases it.
                #expect(await eventually {
                    await clock.advance(by: .zero)
                    return sut.stats.ticks == second
                })
                if second == switchOffAfter { try await power.setPower(on: false) }
            }
            group.cancelAll()
        }
        var framer = NMEAFramer()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var sentences: [NMEASentence] = []
        // The PTY hands bytes to the reading side asynchronously: read until it stays quiet for 200 ms.
        var readable = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&readable, 1, 200) > 0 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            sentences += framer.append(buffer[0..<n])
        }
        withExtendedLifetime(sut) {}  // closing the PTY's master side would discard what is unread
        return sentences
    }

    private func fixes(in sentences: [NMEASentence]) -> [Fix] {
        let decoder = NMEADecoder(context: NMEADecodingContext(referenceDate: { Date(timeIntervalSince1970: 1_795_219_200) }))
        var assembler = NMEAFixAssembler()
        var fixes = sentences.flatMap { sentence in (try? decoder.decode(sentence)).map { Array(assembler.add($0)) } ?? [] }
        if let last = assembler.flush() { fixes.append(last) }
        return fixes
    }

    @Test func writesNothingWhilePoweredOff() async throws {
        let power = SimulatedPowerSwitch()
        let sut = try SimulatedGPS(power: power)
        #expect(try await run(sut, seconds: 10, power: power).isEmpty)
    }

    @Test func writesGGAAndRMCEverySecondWhilePowered() async throws {
        let power = SimulatedPowerSwitch()
        try await power.setPower(on: true)
        let sut = try SimulatedGPS(power: power)
        let sentences = try await run(sut, seconds: 10, power: power)
        #expect(sentences.filter { $0.type == "GGA" }.count == 10)
        #expect(sentences.filter { $0.type == "RMC" }.count == 10)
    }

    @Test func coldStartReportsNoFixUntilTheTimeToFirstFix() async throws {
        let power = SimulatedPowerSwitch()
        try await power.setPower(on: true)
        let sut = try SimulatedGPS(power: power, options: .init(coldStartTTFF: 20...20))
        let sentences = try await run(sut, seconds: 25, power: power)
        let fixes = fixes(in: sentences)
        #expect(sut.stats.coldStarts == 1)
        #expect(fixes.count == 5)
        #expect(sut.stats.epochs == 25)
    }

    @Test func firstFixesAreNoisierThanLaterOnes() async throws {
        let power = SimulatedPowerSwitch()
        try await power.setPower(on: true)
        let sut = try SimulatedGPS(power: power, options: .init(coldStartTTFF: 1...1))
        let fixes = fixes(in: try await run(sut, seconds: 8, power: power))
        #expect(fixes.count == 7)
        #expect((fixes.first?.hdop ?? 0) > (fixes.last?.hdop ?? 99))
    }

    @Test func stopsWritingWhenPoweredOff() async throws {
        let power = SimulatedPowerSwitch()
        try await power.setPower(on: true)
        let sut = try SimulatedGPS(power: power, options: .init(coldStartTTFF: 1...1))
        _ = try await run(sut, seconds: 20, power: power, switchOffAfter: 5)
        #expect(sut.stats.epochs == 5)
    }
}
