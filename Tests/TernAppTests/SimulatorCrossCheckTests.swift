import Foundation
import Synchronization
import Testing
import TernApp
import TernCore
import TernGateway
import TernHardware
import TernSimulation
import TernStore
import TernTesting

/// `tern simulate` against the real path: the same trace and power-ons through the simulated board
/// (PTY at 9600 baud, termios, the NMEA assembler, the gateway, a SQLite file) and through the energy
/// simulator; the receiver's on-time per power cycle must agree.
@Suite(.timeLimit(.minutes(5))) struct SimulatorCrossCheckTests {
    static let traces = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "../TernSimulationTests/Traces").standardized.path

    /// Without the warm-up: a fixed cycle then ends with the first fix, and the cycle's time on the wire is a
    /// tenth of it (the check below can tell whether the model charges it).
    static let noWarmUp = StandardLocationFilter.Options(warmUp: .zero)

    /// The first `seconds` of the car drive around Višnjan.
    private func trace(seconds: Double) throws -> Trace {
        let full = try TraceLoader.load(path: Self.traces + "/around-visnjan-with-car.gpx").trace
        return Trace(name: full.name, points: full.points.filter { $0.time.timeIntervalSince(full.start) <= seconds })
    }

    /// Power-on to power-off, seconds, of each cycle that began within `window`, from switch changes.
    private static func cycles(_ changes: [(on: Bool, at: Double)], within window: ClosedRange<Double>) -> [Double] {
        var result: [Double] = []
        var since: Double?
        for change in changes {
            if change.on { since = since ?? change.at } else if let start = since {
                if window.contains(start) { result.append(change.at - start) }
                since = nil
            }
        }
        return result
    }

    /// Runs the trace through the simulated board and the real gateway; returns the power switch's
    /// changes, in seconds of the GPS's clock (its epochs are on whole seconds).
    private func realPath(
        trace: Trace, policy: FixPolicy, model: ReceiverModel, speed: Double, seed: UInt64
    ) async throws -> [(on: Bool, at: Double)] {
        let board = try SimulatedBoard(speed: speed, seed: seed, startTime: trace.start, route: trace, model: model)
        let directory = NSTemporaryDirectory() + "tern-crosscheck-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = Mutex<[(on: Bool, at: Double)]>([])
        let receiver = NMEAReceiver(
            serialPort: board.serialPort, powerSwitch: board.power, options: .init(dateReference: { .notBefore(trace.start) }),
            logger: .quiet(), clock: board.clock)
        let queue = try SQLitePositionQueue(path: directory + "/queue.sqlite")
        // The GPS's epochs count from here; the gateway starts on its first epoch, as the simulator's
        // schedule does (a real receiver's seconds fall anywhere in Tern's schedule: the same on average).
        let start = board.clock.now
        board.power.observe { [clock = board.clock] on in log.withLock { $0.append((on, start.duration(to: clock.now).seconds)) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await board.gps.run(clock: board.clock, from: start) }
            try await board.clock.sleep(until: start.advanced(by: .seconds(1)), tolerance: nil)
            let gateway = Gateway(
                receiver: receiver, filter: StandardLocationFilter(options: Self.noWarmUp), queue: queue,
                forwarder: SpyForwarder(), scheduler: FixScheduler(options: .init(policy: policy, energy: model.energy)),
                clock: board.clock, logger: .quiet())
            group.addTask { try await gateway.run() }
            try await board.clock.sleep(until: start.advanced(by: .seconds(trace.duration + 6)), tolerance: nil)
            group.cancelAll()
        }
        await board.serialPort.close()
        return log.withLock { $0 }
    }

    @Test func theReceiversOnTimePerPowerCycleAgreesWithTheRealPathWithin10Percent() async throws {
        // An MT3339 with a short cold start, so that the run is spent on hot cycles. 5× real time: the
        // real path's own delays (milliseconds, more on a loaded machine) count five times over (at 10×
        // the rest of the suite running beside it once put one cycle a second off).
        var receiver = ReceiverModel.mt3339
        receiver.coldTTFF = 6
        let trace = try trace(seconds: 140)
        let policy = FixPolicy.fixed(interval: .seconds(10))
        let changes = try await realPath(trace: trace, policy: policy, model: receiver, speed: 5, seed: 3)
        // The gateway started (its schedule's 0) at its first power-on, some way into the GPS's second:
        // the simulator gets the same schedule and the same place of the epochs in it.
        let origin = try #require(changes.first?.at)
        var options = SimulationOptions(policy: policy, receiver: receiver, seed: 3, filter: Self.noWarmUp)
        options.epochPhase = (origin.rounded(.up) - origin).truncatingRemainder(dividingBy: 1)
        let result = simulate(trace: trace, options: options)
        // The hot cycles: after the cold first one, and begun early enough to end within the trace.
        let window = 1.0...(trace.duration - 10)
        let hotReal = Self.cycles(changes.map { ($0.on, $0.at - origin) }, within: window)
        let hotSimulated = Self.cycles(result.powerLog.map { ($0.state != .off, $0.time) }, within: window)
        #expect(hotReal.count >= 10)
        // One cycle more or less at the window's edge (a loaded machine delays the real path's start).
        #expect(abs(hotReal.count - hotSimulated.count) <= 1, "real \(hotReal), simulated \(hotSimulated)")
        let meanReal = hotReal.reduce(0, +) / Double(max(1, hotReal.count))
        let meanSimulated = hotSimulated.reduce(0, +) / Double(max(1, hotSimulated.count))
        print("cross-check: real \(hotReal.map { ($0 * 1000).rounded() / 1000 }) mean \(meanReal); simulated \(hotSimulated.map { ($0 * 1000).rounded() / 1000 }) mean \(meanSimulated)")
        #expect(abs(meanSimulated - meanReal) <= 0.1 * meanReal, "mean on-time per cycle: real \(meanReal) s, simulated \(meanSimulated) s")
        // The check can tell: without the cycle's time on the wire the model would be off by more than 10 %.
        let withoutTransmission = meanSimulated - receiver.transmission(bytes: 340)
        #expect(abs(withoutTransmission - meanReal) > 0.1 * meanReal)
    }
}
