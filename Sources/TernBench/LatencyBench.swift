import ArgumentParser
import Foundation
import Logging
import AsyncHTTPClient
import Synchronization
import TernApp
import TernCore
import TernGateway
import TernHardware
import TernNMEA
import TernStore

#if canImport(Glibc)
import Glibc
#endif

/// `tern-bench latency`: how soon Tern acts on a fix, through the path the device runs.
struct LatencyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Time from the last byte of a satisfying receiver cycle on the wire to the receiver's power-off.",
        discussion: """
            A pseudo-terminal stands in for the UART: a paced writer sends MT3339 cycles (GGA GSA GSV \
            RMC VTG, NMEAWriter.cycle) of a receiver driving at --speed, at --baud in 10 ms chunks while \
            the power switch is on. Tern reads the other side with the pipeline `tern run` builds \
            (Pipeline, from a configuration read by the daemon's own loader: the shipped defaults with \
            the adaptive policy): ReconnectingSerialPort → NMEAReceiver → Gateway → FixScheduler \
            (adaptive, warm-up, plausibility) → StandardLocationFilter (production rules and thinning) \
            → group commit → SQLitePositionQueue in a temporary directory; the uplink stays offline. \
            The first power-on sends --learning-epochs no-fix cycles first (a cold start, during which \
            the reader learns how cycles end); every later one sends fix cycles at once (a hot start). \
            Per power cycle: power-off time minus the time the writer put the satisfying cycle's last \
            byte into the PTY (ContinuousClock, same process). Also checks the order: the power-off \
            after that byte and before any byte of a next cycle. --check: exit 1 when p95 > 50 ms.
            """)

    @Option(help: "Power cycles to measure.")
    var cycles = 100

    @Option(help: "Baud rate the writer paces its bytes at.")
    var baud = 9600

    @Option(help: "The simulated receiver's speed, m/s (moving, so the adaptive policy keeps asking for fixes).")
    var speed = 15.0

    @Flag(help: "Exit 1 when the p95 latency exceeds 50 ms (CI).")
    var check = false

    @Option(help: "No-fix cycles sent at the first power-on, one per --epoch-spacing.")
    var learningEpochs = 5

    @Option(help: "Seconds between a cycle's epochs while powered (1 for a 1 Hz receiver).")
    var epochSpacing = 0.5

    func validate() throws {
        guard cycles >= 1 else { throw ValidationError("--cycles must be at least 1") }
        guard TermiosSerialPort.supportedBaudRates[baud] != nil else {
            throw ValidationError("--baud must be one of 4800, 9600, 19200, 38400, 57600, 115200")
        }
        guard epochSpacing > 0, speed >= 0 else { throw ValidationError("--epoch-spacing must be positive, --speed not negative") }
    }

    func run() async throws {
        let pty = try BenchPTY()
        let directory = NSTemporaryDirectory() + "tern-bench-latency-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let clock = ContinuousClock()
        let power = TimedSwitch(clock: clock)
        let writer = PacedWriter(
            fd: pty.master, baud: baud, clock: clock, power: power, spacing: epochSpacing, learning: learningEpochs, speed: speed)
        let logger = Logger(label: "tern-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        // The daemon's loader: every key not named here takes the shipped default.
        let config = try TernConfig.parse("""
            data_dir = "\(directory)"
            [receiver]
            device = "\(pty.slavePath)"
            baud = \(baud)
            [scheduler]
            policy = "adaptive"
            [uplink]
            url = "http://127.0.0.1:9/positions"
            """)
        guard let offline = config.uplink.url else { throw ValidationError("the bench's configuration has no uplink.url") }
        let queue = try Pipeline<ContinuousClock>.openQueue(config: config, logger: logger)
        let serialPort = ReconnectingSerialPort(path: pty.slavePath, baudRate: baud, logger: logger)
        let parts = Pipeline<ContinuousClock>.Parts(
            queue: queue, serialPort: serialPort, powerSwitch: power, uplinkURL: offline,
            connectivity: ManualConnectivity(), receiverOptions: .init(dateReference: SystemClock.dateReference))
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let pipeline = try Pipeline(config: config, parts: parts, httpClient: httpClient, clock: clock, logger: logger)
        let receiver = pipeline.receiver
        let gateway = pipeline.gateway
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writer.run() }
                group.addTask { try await gateway.run() }
                while power.powerOffs.count < cycles { try await clock.sleep(for: .milliseconds(50)) }
                group.cancelAll()
            }
        } catch is CancellationError {}
        try? await httpClient.shutdown()

        let offs = power.powerOffs.prefix(cycles)
        let sent = writer.cycles
        var latencies: [Double] = []
        var orderViolations = 0
        for off in offs {
            // The satisfying cycle: the last one whose last byte went out before the power-off.
            guard let satisfying = sent.last(where: { $0.lastByte <= off }) else {
                orderViolations += 1
                continue
            }
            latencies.append((off - satisfying.lastByte).seconds * 1000)
            if sent.contains(where: { $0.firstByte > satisfying.lastByte && $0.firstByte < off }) { orderViolations += 1 }
        }
        let stats = receiver.stats.assembler
        let status = await gateway.status()
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double { Statistics.percentile(sorted: sorted, p) }
        let report: [String: Any] = [
            "benchmark": "latency",
            "cycles": latencies.count,
            "baud": baud,
            "policy": "adaptive",
            "configuration": "shipped defaults (daemon loader), receiver moving at \(speed) m/s",
            "latency_ms": [
                "min": round3(sorted.first ?? 0), "p50": round3(percentile(0.5)), "p95": round3(percentile(0.95)),
                "max": round3(sorted.last ?? 0), "mean": round3(sorted.reduce(0, +) / Double(max(1, sorted.count))),
            ],
            "first_cycles_ms": latencies.prefix(5).map(round3),
            "order_violations": orderViolations,
            "fixes_stale": status.staleFixes,
            "fixes_rejected": status.rejections,
            "epochs_completed_at_cycle_end": stats.completedAtCycleEnd,
            "epochs_completed_when_quiet": stats.completedWhenQuiet,
            "machine": ["os": osName(), "cores": ProcessInfo.processInfo.activeProcessorCount],
        ]
        let data = try JSONOutput.data(report)
        print(String(decoding: data, as: UTF8.self))
        if orderViolations > 0 { throw ExitCode(1) }
        if check, percentile(0.95) > 50 {
            FileHandle.standardError.write(Data("tern-bench latency: p95 \(round3(percentile(0.95))) ms exceeds 50 ms\n".utf8))
            throw ExitCode(1)
        }
    }
}

private func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

/// The bench's receiver supply: records when it was switched off.
private final class TimedSwitch: PowerSwitch {
    private let state = Mutex<(on: Bool, offs: [ContinuousClock.Instant])>((false, []))
    private let clock: ContinuousClock

    init(clock: ContinuousClock) { self.clock = clock }

    var isOn: Bool { state.withLock { $0.on } }
    var powerOffs: [ContinuousClock.Instant] { state.withLock { $0.offs } }

    func setPower(on: Bool) async throws {
        let now = clock.now
        state.withLock {
            if $0.on && !on { $0.offs.append(now) }
            $0.on = on
        }
    }
}

/// Writes receiver cycles into the PTY while powered, paced as a UART at `baud` sends them.
private final class PacedWriter: Sendable {
    struct Sent: Sendable {
        var firstByte: ContinuousClock.Instant
        var lastByte: ContinuousClock.Instant
    }

    let fd: Int32
    let baud: Int
    let clock: ContinuousClock
    let power: TimedSwitch
    let spacing: Double
    let learning: Int
    let speed: Double
    private let sent = Mutex<[Sent]>([])

    init(fd: Int32, baud: Int, clock: ContinuousClock, power: TimedSwitch, spacing: Double, learning: Int, speed: Double) {
        self.fd = fd
        self.baud = baud
        self.clock = clock
        self.power = power
        self.spacing = spacing
        self.learning = learning
        self.speed = speed
    }

    var cycles: [Sent] { sent.withLock { $0 } }

    func run() async throws {
        let writer = NMEAWriter()
        var powerOns = 0
        var epochsThisPowerOn = 0
        var wasOn = false
        var next = clock.now
        var index = 0
        let origin = Date()
        while true {
            try await clock.sleep(until: next, tolerance: nil)
            let on = power.isOn
            defer { wasOn = on }
            guard on else {
                next = clock.now.advanced(by: .milliseconds(1))
                continue
            }
            if !wasOn {
                powerOns += 1
                epochsThisPowerOn = 0
            }
            epochsThisPowerOn += 1
            index += 1
            // Each epoch a distinct, increasing UTC time (10 ms resolution, as NMEA carries).
            let time = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 100).rounded(.down) / 100)
            // Driving due north at `speed` since the start (a parked receiver would be asked for a fix
            // only every max_interval).
            let north = speed * time.timeIntervalSince(origin) / 111_320
            let fix = Fix(
                time: time, coordinate: Coordinate(latitude: 45.8 + north + Double(index) * 1e-7, longitude: 15.9), altitude: 120,
                speed: max(speed, 0.2), course: 0, quality: .gps, satellites: 9, hdop: 0.8)
            let acquiring = powerOns == 1 && epochsThisPowerOn <= learning
            let cycle = acquiring ? writer.noFixCycle(at: time, heard: 8) : writer.cycle(for: fix, inView: 9)
            let start = clock.now
            if let last = try await send(Array(cycle.joined().utf8), from: start) {
                sent.withLock { $0.append(Sent(firstByte: start, lastByte: last)) }
            }
            next = start.advanced(by: .seconds(spacing))
        }
    }

    /// Writes `bytes` in 10 ms chunks, each when the UART would have sent its last byte; stops when
    /// the power goes off. Returns when the last chunk was written (nil when cut short).
    private func send(_ bytes: [UInt8], from start: ContinuousClock.Instant) async throws -> ContinuousClock.Instant? {
        let chunk = max(1, baud / 1000)
        var offset = 0
        var lastWrite = start
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            try await clock.sleep(until: start.advanced(by: .seconds(Double(end) * 10 / Double(baud))), tolerance: nil)
            guard power.isOn else { return nil }
            // Taken before the write: the reader may act on the bytes before write() returns.
            lastWrite = clock.now
            let written = bytes[offset..<end].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == end - offset else { return nil }
            offset = end
        }
        return lastWrite
    }
}

/// A pseudo-terminal pair: the bench writes the master side, Tern opens the slave by path.
private struct BenchPTY {
    let master: Int32
    let slavePath: String
    private let slave: Int32

    init() throws {
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else {
            throw ValidationError("cannot create a pseudo-terminal: \(String(cString: strerror(errno))) (is /dev/pts mounted?)")
        }
        var name = [CChar](repeating: 0, count: 128)
        guard ttyname_r(slave, &name, name.count) == 0 else { throw ValidationError("ttyname_r failed") }
        self.master = master
        self.slave = slave
        slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
