import Foundation
import Synchronization
import TernCore
import TernNMEA

#if canImport(Glibc)
import Glibc
#endif

/// A GPS module on the simulated board. While its `SimulatedPowerSwitch` is on it writes one NMEA
/// cycle per second into a PTY (so the real termios adapter reads it), paced as a UART at the
/// model's baud rate sends it: a cycle's epoch is on the whole second, its last byte leaves a
/// transmission time later, and a power-off stops it mid-cycle, even mid-sentence. Starts follow the
/// `ReceiverModel`: cold the first time, hot while the ephemeris is young, with the model's time
/// to first fix for each power-on (the same draws as `simulate(trace:options:)`) and noisier first fixes.
public final class SimulatedGPS: Sendable {
    public struct Options: Sendable {
        /// Where the receiver truly is.
        public var route: any Trajectory
        /// The simulated UTC time at the clock's start (tick 0).
        public var startTime: Date
        /// Currents, times to first fix, noise and baud rate.
        public var model: ReceiverModel
        /// A fixed time to first fix for every start instead of the model's draws (tests).
        public var fixedTTFF: Double?
        public var seed: UInt64

        public init(
            route: any Trajectory = Route.zagrebLoop, startTime: Date = Date(timeIntervalSince1970: 1_795_219_200),
            model: ReceiverModel = .mt3339, fixedTTFF: Double? = nil, seed: UInt64 = 1
        ) {
            self.route = route
            self.startTime = startTime
            self.model = model
            self.fixedTTFF = fixedTTFF
            self.seed = seed
        }
    }

    public struct Stats: Sendable, Hashable {
        /// Simulated seconds elapsed (powered or not).
        public var ticks = 0
        /// Seconds the module was powered and began an epoch.
        public var epochs = 0
        public var fixes = 0
        public var coldStarts = 0
        public var warmStarts = 0
        public var hotStarts = 0
        /// Cycles written out (whole, or cut short by a power-off) and how many were cut short.
        public var cyclesWritten = 0
        public var epochsCut = 0
        /// Bytes the reader did not take in time (PTY buffer full), like a UART overrun.
        public var droppedBytes = 0
    }

    /// Seconds after power-on before an acquiring receiver hears satellites, and how many (as in
    /// `simulate(trace:options:)`).
    public static let hearingDelay = 2.0
    public static let satellitesHeard = 8

    /// The PTY's device path, e.g. `/dev/pts/3`: open it as the receiver's serial port.
    public let devicePath: String
    private let master: Int32
    private let slave: Int32
    private let power: SimulatedPowerSwitch
    private let options: Options
    private let counters = Mutex(Stats())
    /// The fixes it reported (and their faults), by their time in milliseconds (the newest `reportsKept` at least).
    private let reports = Mutex([Int64: SimulatedFixes.Report]())
    static let reportsKept = 8192

    public init(power: SimulatedPowerSwitch, options: Options = Options()) throws {
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else {
            throw SimulationError.pty(String(cString: strerror(errno)))
        }
        var raw = termios()
        tcgetattr(slave, &raw)
        cfmakeraw(&raw)
        tcsetattr(slave, TCSANOW, &raw)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        var name = [CChar](repeating: 0, count: 128)
        guard ttyname_r(slave, &name, name.count) == 0 else {  // ttyname() is not thread-safe
            close(master)
            close(slave)
            throw SimulationError.pty("ttyname_r failed")
        }
        self.devicePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.master = master
        self.slave = slave
        self.power = power
        self.options = options
    }

    deinit {
        close(master)
        close(slave)
    }

    public var stats: Stats { counters.withLock { $0 } }

    /// The fix this receiver reported dated `time` (nil: it reported none then, or long ago), and the
    /// fault the error model put in it (an outlier, a stale repeat), if any: what a stored position
    /// must be, whatever the receiver's error, and what the board knows and Tern must find out from
    /// the fixes alone.
    public func report(at time: Date) -> SimulatedFixes.Report? {
        reports.withLock { $0[Self.key(time)] }
    }

    private func noteReport(_ report: SimulatedFixes.Report) {
        reports.withLock { reports in
            reports[Self.key(report.fix.time)] = report
            if reports.count > 2 * Self.reportsKept {
                let oldest = reports.keys.sorted().dropLast(Self.reportsKept)
                for key in oldest { reports[key] = nil }
            }
        }
    }

    private static func key(_ time: Date) -> Int64 { Int64((time.timeIntervalSince1970 * 1000).rounded()) }

    /// The simulated UTC time `seconds` after the clock's start.
    public func utc(at seconds: Double) -> Date { options.startTime.addingTimeInterval(seconds) }

    /// Emits one cycle per simulated second after `start` (default: now) while powered, until cancelled.
    public func run<C: Clock>(clock: C, from start: C.Instant? = nil) async throws where C.Duration == Duration {
        let start = start ?? clock.now
        let switches = PowerLog()
        power.observe { on in switches.record(on: on, at: start.duration(to: clock.now).seconds) }
        var receiver = ReceiverState()
        if power.isOn {
            receiver.on = true
            startReceiver(at: 0, receiver: &receiver)
        }
        var fixes = SimulatedFixes(model: options.model, seed: options.seed)
        let writer = NMEAWriter()
        var tick = 0
        while true {
            try await clock.sleep(until: start.advanced(by: .seconds(tick + 1)), tolerance: nil)
            tick += 1
            counters.withLock { $0.ticks = tick }
            let now = Double(tick)
            for change in switches.take(until: now) { power(change, receiver: &receiver) }
            guard receiver.on, let poweredAt = receiver.poweredAt else { continue }
            let time = utc(at: now)
            var sentences: [String]
            if now < poweredAt + receiver.ttff {
                let heard = now - poweredAt >= Self.hearingDelay ? Self.satellitesHeard : 0
                sentences = writer.noFixCycle(at: time, heard: heard)
            } else {
                receiver.fixesThisStart += 1
                if receiver.fixesThisStart == 1, receiver.start != .hot { receiver.ephemerisAt = now }
                if now - (receiver.trackingSince ?? now) >= options.model.energy.ephemerisRefresh.seconds {
                    receiver.ephemerisAt = now
                }
                receiver.trackingSince = receiver.trackingSince ?? now
                let report = fixes.report(
                    time: time, truth: options.route.state(at: now), number: receiver.fixesThisStart,
                    startUp: receiver.startUp)
                noteReport(report)
                let fix = report.fix
                let noisy = receiver.fixesThisStart <= receiver.startUp.noisyFixes
                sentences = writer.cycle(for: fix, inView: SimulatedCycle.satellites(noisy: noisy))
                counters.withLock { $0.fixes += 1 }
            }
            counters.withLock { $0.epochs += 1 }
            try await send(sentences, epoch: now, start: start, clock: clock, switches: switches)
        }
    }

    /// What the module itself knows: power, ephemeris, the current start.
    private struct ReceiverState {
        var on = false
        var poweredAt: Double?
        var powerOns = 0
        var start: StartKind = .cold
        var ttff = 0.0
        var ephemerisAt: Double?
        var fixesThisStart = 0
        var startUp = SimulatedFixes.StartUp(noisyFixes: 0, noisyFactor: 1)
        var trackingSince: Double?
    }

    private func power(_ change: PowerLog.Change, receiver: inout ReceiverState) {
        receiver.on = change.on
        guard change.on else {
            receiver.poweredAt = nil
            receiver.trackingSince = nil
            return
        }
        startReceiver(at: change.time, receiver: &receiver)
    }

    private func startReceiver(at time: Double, receiver: inout ReceiverState) {
        let model = options.model
        receiver.poweredAt = time
        receiver.start = model.startKind(ephemerisAge: receiver.ephemerisAt.map { time - $0 })
        receiver.ttff = options.fixedTTFF ?? model.ttff(receiver.start, powerOn: receiver.powerOns, seed: options.seed)
        receiver.startUp = SimulatedFixes.startUp(of: model, powerOn: receiver.powerOns, seed: options.seed)
        receiver.powerOns += 1
        receiver.fixesThisStart = 0
        counters.withLock {
            switch receiver.start {
            case .hot: $0.hotStarts += 1
            case .warm: $0.warmStarts += 1
            case .cold: $0.coldStarts += 1
            }
        }
    }

    /// Writes a cycle as the UART sends it, in chunks of at most `chunkDuration` on the wire, each
    /// when its last byte would have left (so the line is never quiet inside a cycle for longer than a
    /// chunk); a power-off stops the cycle where the line was at that moment.
    private func send<C: Clock>(
        _ sentences: [String], epoch: Double, start: C.Instant, clock: C, switches: PowerLog
    ) async throws where C.Duration == Duration {
        let model = options.model
        let bytes = Array(sentences.joined().utf8)
        // Counted before its last bytes go out: a reader may act on them before this task runs again.
        if bytes.isEmpty { counters.withLock { $0.cyclesWritten += 1 } }
        let chunk = max(1, Int(Self.chunkDuration * Double(model.baudRate) / 10))
        var sent = 0
        var counted = bytes.isEmpty
        while sent < bytes.count {
            let next = min(sent + chunk, bytes.count)
            let end = epoch + model.transmission(bytes: next)
            let deadline = start.advanced(by: .seconds(end))
            if clock.now < deadline { try await clock.sleep(until: deadline, tolerance: nil) }
            if let off = switches.firstOff(after: epoch), off < end {
                let onTheWire = min(next, max(sent, Int((off - epoch) * Double(model.baudRate) / 10)))
                // Cut (unless only the last line's "\n" was still to come: the cycle was complete).
                if !counted {
                    counters.withLock {
                        $0.cyclesWritten += 1
                        $0.epochsCut += 1
                    }
                }
                emit(Array(bytes[sent..<onTheWire]))
                return
            }
            // The last line is complete at its "\r" (a reader may take it there): counted with the
            // chunk that carries it, even when the "\n" comes in the next.
            if !counted, next >= bytes.count - 1 {
                counted = true
                counters.withLock { $0.cyclesWritten += 1 }
            }
            emit(Array(bytes[sent..<next]))
            sent = next
        }
    }

    /// The longest stretch of a cycle written at once, seconds on the wire (a real UART sends byte by
    /// byte; a reader's quiet gap must never fall inside a cycle).
    static let chunkDuration = 0.01

    private func emit(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let written = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        if written < bytes.count {
            counters.withLock { $0.droppedBytes += bytes.count - max(written, 0) }
        }
    }
}

/// The supply's changes as the simulated GPS saw them, in its own seconds since start.
private final class PowerLog: Sendable {
    struct Change: Sendable {
        var on: Bool
        var time: Double
    }

    private let changes = Mutex<[Change]>([])

    func record(on: Bool, at time: Double) { changes.withLock { $0.append(Change(on: on, time: time)) } }

    /// The changes up to `time`, removed from the log.
    func take(until time: Double) -> [Change] {
        changes.withLock { changes in
            let due = changes.prefix { $0.time <= time }
            changes.removeFirst(due.count)
            return Array(due)
        }
    }

    /// When the supply was first switched off after `time`, if it was (not removed).
    func firstOff(after time: Double) -> Double? {
        changes.withLock { $0.first { !$0.on && $0.time > time }?.time }
    }
}

public enum SimulationError: Error, CustomStringConvertible {
    case pty(String)

    public var description: String {
        switch self {
        case let .pty(reason): "cannot create a pseudo-terminal for the simulated GPS: \(reason) (is /dev/pts mounted?)"
        }
    }
}
