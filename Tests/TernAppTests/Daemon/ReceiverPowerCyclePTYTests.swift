import Clocks
import Foundation
import Synchronization
import Testing
import TernCore
import TernGateway
import TernHardware
import TernSimulation
import TernStore
import TernTesting

/// Power cycles through the path the device runs: the simulated GPS writes MT3339 cycles into a
/// PTY (paced at 9600 baud on a virtual clock, cut mid-sentence by a power-off); Tern reads the
/// other side with termios and the real `NMEAReceiver`.
@Suite(.timeLimit(.minutes(5))) struct ReceiverPowerCyclePTYTests {
    /// A simulated GPS stepped one virtual second at a time.
    private struct GPS {
        let power = SimulatedPowerSwitch()
        let clock = TestClock()
        let sut: SimulatedGPS
        let start: TestClock<Duration>.Instant

        init(fixedTTFF: Double) throws {
            sut = try SimulatedGPS(power: power, options: .init(fixedTTFF: fixedTTFF))
            start = clock.now
        }

        func run() async throws { try await sut.run(clock: clock, from: start) }

        func port() throws -> TermiosSerialPort { try TermiosSerialPort.open(path: sut.devicePath, baudRate: 9600) }

        /// Second `n`'s epoch begins; `into` later, the UART has sent that much of its cycle.
        func advance(toSecond n: Int, plus into: Duration = .milliseconds(900)) async {
            await clock.advance(to: start.advanced(by: .seconds(n)))
            _ = await nudge { sut.stats.ticks == n }
            await clock.advance(by: into)
            // 900 ms on, the cycle (about 0.4 s at 9600 baud) is out.
            if into >= .milliseconds(900) { _ = await nudge { sut.stats.cyclesWritten == sut.stats.epochs } }
        }

        /// Waits for `condition`, releasing a sleep the TestClock parked at the current instant.
        func nudge(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
            await eventually {
                await clock.advance(by: .zero)
                return condition()
            }
        }

        func utc(_ second: Double) -> Date { sut.utc(at: second) }
    }

    /// Fixes as the reader delivered them.
    private final class FixLog: Sendable {
        private let fixes = Mutex<[Fix]>([])
        func withLock<T>(_ body: (inout [Fix]) -> T) -> T { fixes.withLock { body(&$0) } }
    }

    @Test func aPowerOffMidCycleNeverLetsItsOpenEpochOut() async throws {
        let gps = try GPS(fixedTTFF: 1)
        // The reader's own virtual clock: its quiet-line timer fires only when the test says so.
        let readerClock = TestClock()
        let sut = NMEAReceiver(
            serialPort: try gps.port(), powerSwitch: gps.power,
            options: .init(dateReference: { [start = gps.utc(0)] in .notBefore(start) }), logger: .quiet(), clock: readerClock)
        let fixes = FixLog()
        let secondPowerOn = 9.5

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await gps.run() }
            group.addTask { for try await fix in sut.fixes() { fixes.withLock { $0.append(fix) } } }
            try await sut.powerOn()
            for second in 1...6 { await gps.advance(toSecond: second) }
            #expect(await eventually { fixes.withLock { $0.count } == 6 })
            // 100 ms into second 7's cycle: its GGA (with a position) and part of its GSA are out.
            let sentencesBefore = sut.stats.framer.sentences
            await gps.advance(toSecond: 7, plus: .milliseconds(100))
            #expect(await eventually { sut.stats.framer.sentences > sentencesBefore })
            try await sut.powerOff()
            await readerClock.advance(by: .seconds(2))  // the line stays quiet
            await gps.advance(toSecond: 9, plus: .milliseconds(500))
            try await sut.powerOn()
            for second in 10...13 { await gps.advance(toSecond: second) }
            #expect(await eventually { fixes.withLock { $0.last?.time } == gps.utc(13) })
            group.cancelAll()
        }

        let times = fixes.withLock { $0.map(\.time) }
        #expect(gps.sut.stats.epochsCut == 1)
        #expect(!times.contains(gps.utc(7)))
        #expect(times.filter { $0 > gps.utc(6) }.allSatisfy { $0 > gps.utc(secondPowerOn) })
        #expect(sut.stats.assembler.discardedEpochs == 1)
    }

    @Test func theGatewaySwitchesOffAfterTheSatisfyingCyclesLastSentenceBeforeTheNextCycle() async throws {
        // Six no-fix cycles (a cold start) teach the reader how cycles end; fixes from second 6 on.
        let gps = try GPS(fixedTTFF: 6)
        // No quiet-line completion within the test: only the learnt end of the cycle can complete it.
        let receiver = NMEAReceiver(
            serialPort: try gps.port(), powerSwitch: gps.power,
            options: .init(dateReference: { [start = gps.utc(0)] in .notBefore(start) }, quietGap: .seconds(60)), logger: .quiet())
        let directory = NSTemporaryDirectory() + "tern-order-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // No warm-up: the GPS's seconds pass faster than real time here, and the gateway's clock is real.
        let gateway = Gateway(
            configuration: GatewayCore.Configuration(scheduler: .init(policy: .fixed(interval: .seconds(3600))), filter: .init(warmUp: .zero)),
            receiver: receiver, queue: try SQLitePositionQueue(path: directory + "/queue.sqlite"), forwarder: SpyForwarder(),
            clock: ContinuousClock(), logger: .quiet())
        // What the UART had sent when the power went off.
        let atPowerOff = Mutex<SimulatedGPS.Stats?>(nil)
        gps.power.observe { on in if !on { atPowerOff.withLock { $0 = $0 ?? gps.sut.stats } } }

        var satisfying: Int?
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await gps.run() }
            group.addTask { try await gateway.run() }
            #expect(await eventually { gps.power.isOn })
            for second in 1...20 {
                await gps.advance(toSecond: second)
                // Until the end is learnt (3 cycles), a cycle completes when the next one begins.
                let completed = second <= 3 ? second - 1 : second
                _ = await eventually {
                    let status = await gateway.status()
                    return !gps.power.isOn || status.fixesSeen + status.noFixEpochs >= completed
                }
                if !gps.power.isOn {
                    satisfying = second
                    break
                }
            }
            group.cancelAll()
        }

        let second = try #require(satisfying)
        let stats = try #require(atPowerOff.withLock { $0 })
        #expect(second >= 6)
        #expect(stats.cyclesWritten == second)
        #expect(stats.ticks == second)
        #expect(stats.epochsCut == 0)
        #expect(await gateway.status().lastAccepted?.time == gps.utc(Double(second)))
    }
}
