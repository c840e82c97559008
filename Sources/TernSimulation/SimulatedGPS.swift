import Foundation
import Synchronization
import TernCore
import TernNMEA

#if canImport(Glibc)
import Glibc
#endif

/// A GPS module on the simulated board: it writes NMEA at 1 Hz into a PTY (so the real termios
/// adapter reads it) while its `SimulatedPowerSwitch` is on, with a realistic time to first fix:
/// a cold start the first time, hot starts after short power-offs, and noisier first fixes.
public final class SimulatedGPS: Sendable {
    public struct Options: Sendable {
        public var route: Route
        /// The simulated UTC time at the first tick.
        public var startTime: Date
        /// Time to first fix without ephemeris, seconds (MT3339 datasheet: 35 s cold start).
        public var coldStartTTFF: ClosedRange<Double>
        /// Time to first fix with fresh ephemeris (MT3339 datasheet: 1 s hot start; real ones take 1–5 s).
        public var hotStartTTFF: ClosedRange<Double>
        /// Ephemeris stays usable this long after power-off (hot-start window), seconds.
        public var hotStartWindow: Double
        /// 1-σ horizontal noise per axis, metres (≈ 3 m CEP50).
        public var noise: Double
        public var seed: UInt64

        public init(
            route: Route = .zagrebLoop, startTime: Date = Date(timeIntervalSince1970: 1_795_219_200),
            coldStartTTFF: ClosedRange<Double> = 30...36, hotStartTTFF: ClosedRange<Double> = 1...5,
            hotStartWindow: Double = 7_200, noise: Double = 2.5, seed: UInt64 = 1
        ) {
            self.route = route
            self.startTime = startTime
            self.coldStartTTFF = coldStartTTFF
            self.hotStartTTFF = hotStartTTFF
            self.hotStartWindow = hotStartWindow
            self.noise = noise
            self.seed = seed
        }
    }

    public struct Stats: Sendable, Hashable {
        /// Simulated seconds elapsed (powered or not).
        public var ticks = 0
        /// Seconds the module was powered and sent an epoch.
        public var epochs = 0
        public var fixes = 0
        public var coldStarts = 0
        public var hotStarts = 0
        /// Bytes the reader did not take in time (PTY buffer full), like a UART overrun.
        public var droppedBytes = 0
    }

    /// The PTY's device path, e.g. `/dev/pts/3`: open it as the receiver's serial port.
    public let devicePath: String
    private let master: Int32
    private let slave: Int32
    private let power: SimulatedPowerSwitch
    private let options: Options
    private let counters = Mutex(Stats())

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

    /// Emits one epoch per simulated second after `start` (default: now) until cancelled.
    public func run<C: Clock>(clock: C, from start: C.Instant? = nil) async throws where C.Duration == Duration {
        let start = start ?? clock.now
        var random = SplitMix64(seed: options.seed)
        let writer = NMEAWriter()
        var tick = 0
        var poweredAt: Int?
        var ttff = 0
        var lastOff: Int?
        var fixesThisStart = 0
        while true {
            try await clock.sleep(until: start.advanced(by: .seconds(tick + 1)), tolerance: nil)
            tick += 1
            defer { counters.withLock { $0.ticks = tick } }
            guard power.isOn else {
                if poweredAt != nil { lastOff = tick }
                poweredAt = nil
                continue
            }
            if poweredAt == nil {
                poweredAt = tick
                fixesThisStart = 0
                let hot = lastOff.map { Double(tick - $0) <= options.hotStartWindow } ?? false
                let range = hot ? options.hotStartTTFF : options.coldStartTTFF
                ttff = Int((range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUnit()).rounded())
                counters.withLock { if hot { $0.hotStarts += 1 } else { $0.coldStarts += 1 } }
            }
            let time = options.startTime.addingTimeInterval(Double(tick))
            let sentences: [String]
            if tick - (poweredAt ?? tick) < ttff {
                // Under the (always clear) simulated sky the receiver hears satellites after 2 s.
                sentences = writer.noFixSentences(at: time, heard: tick - (poweredAt ?? tick) >= 2 ? 8 : 0)
            } else {
                fixesThisStart += 1
                sentences = writer.sentences(for: fix(at: tick, time: time, first: fixesThisStart <= 2, random: &random))
                counters.withLock { $0.fixes += 1 }
            }
            counters.withLock { $0.epochs += 1 }
            emit(sentences.joined())
        }
    }

    private func fix(at tick: Int, time: Date, first: Bool, random: inout SplitMix64) -> Fix {
        let truth = options.route.state(at: Double(tick))
        let scale = first ? 2.5 : 1
        let north = gaussian(&random) * options.noise * scale
        let east = gaussian(&random) * options.noise * scale
        let shifted = Geodesy.destination(from: truth.coordinate, distance: hypot(north, east), bearing: atan2(east, north) * 180 / .pi)
        let hdop = (first ? 2.4 : 0.8 + 0.2 * random.nextUnit())
        return Fix(
            time: time, coordinate: shifted, altitude: 120 + gaussian(&random) * 4, speed: truth.speed,
            course: truth.course, quality: .gps, satellites: 8 + Int(random.next() % 3), hdop: hdop)
    }

    private func gaussian(_ random: inout SplitMix64) -> Double {
        let u1 = max(random.nextUnit(), 1e-12), u2 = random.nextUnit()
        return sqrt(-2 * log(u1)) * cos(2 * .pi * u2)
    }

    private func emit(_ text: String) {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        if written < bytes.count {
            counters.withLock { $0.droppedBytes += bytes.count - max(written, 0) }
        }
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
