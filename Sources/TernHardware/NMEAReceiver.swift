import Foundation
import Logging
import Synchronization
import TernCore
import TernNMEA

/// Counters of an `NMEAReceiver`, summed over every `fixes()` stream it served.
public struct NMEAReceiverStats: Sendable, Hashable {
    public var bytes = 0
    public var framer = NMEAFramerStats()
    /// Checksum-valid sentences of a known type that would not decode.
    public var decodeErrors = 0
    public var assembler = NMEAFixAssemblerStats()

    public init() {}

    /// Field by field (the pump records what each read added).
    public static func + (lhs: Self, rhs: Self) -> Self {
        var result = Self()
        result.bytes = lhs.bytes + rhs.bytes
        result.framer = lhs.framer + rhs.framer
        result.decodeErrors = lhs.decodeErrors + rhs.decodeErrors
        result.assembler = lhs.assembler + rhs.assembler
        return result
    }

    public var sentences: Int { framer.sentences }
    public var checksumErrors: Int { framer.checksumErrors }
    public var fixes: Int { assembler.fixesEmitted }
}

/// A GPS receiver that speaks NMEA 0183 on a serial port, powered through a `PowerSwitch`.
///
/// It watches the link while `fixes()` is read: silence while powered and wrong-baud garbage
/// (`LinkHealthMonitor`), combined with the port's own state when the port reports one (a
/// `ReconnectingSerialPort`: connecting, gone); see `linkState` and `linkStates()`.
public final class NMEAReceiver: GPSReceiver {
    public struct Options: Sendable {
        /// Bytes asked for per read.
        public var readSize: Int
        /// What is known of today's date, for two-digit years and week rollovers in RMC/ZDA dates
        /// (default: `SystemClock.dateReference`).
        public var dateReference: @Sendable () -> NMEADateReference
        /// See `NMEAFixAssembler.defaultUERE`.
        public var uere: Double
        public var maxLineLength: Int
        /// Silence and wrong-baud thresholds.
        public var health: LinkHealthMonitor.Options
        /// When wrong baud is suspected, scan for the right rate (needs a `BaudRateConfigurable` port).
        public var autobaud: Bool
        public var baudScan: BaudScanner.Options
        /// Called with every checksum-valid sentence, in the reading task (e.g. to show raw NMEA).
        public var onSentence: (@Sendable (NMEASentence) -> Void)?
        /// Called with every chunk read from the port, before framing (the control socket's tap: binary
        /// replies such as UBX acknowledgements included).
        public var onBytes: (@Sendable ([UInt8]) -> Void)?
        /// No byte for this long completes the open epoch (until the cycle's last sentence is learnt, and
        /// for cycles that end otherwise). Doubled, up to `maxQuietGap`, when a cycle's sentences come
        /// after it (a receiver that pauses inside its cycle).
        public var quietGap: Duration
        /// The system's realtime clock, read when bytes arrive (`Fix.receivedAt`: chrony's samples).
        public var realtime: @Sendable () -> Date = { Date() }
        public static let defaultQuietGap = Duration.milliseconds(50)
        public static let maxQuietGap = Duration.seconds(1)

        public init(
            readSize: Int = 256, dateReference: @escaping @Sendable () -> NMEADateReference = SystemClock.dateReference,
            uere: Double = NMEAFixAssembler.defaultUERE, maxLineLength: Int = NMEAFramer.defaultMaxLineLength,
            health: LinkHealthMonitor.Options = .init(), autobaud: Bool = false, baudScan: BaudScanner.Options = .init(),
            onSentence: (@Sendable (NMEASentence) -> Void)? = nil, quietGap: Duration = Options.defaultQuietGap
        ) {
            self.quietGap = quietGap
            self.readSize = readSize
            self.dateReference = dateReference
            self.uere = uere
            self.maxLineLength = maxLineLength
            self.health = health
            self.autobaud = autobaud
            self.baudScan = baudScan
            self.onSentence = onSentence
        }
    }

    private let serialPort: any SerialPort
    private let powerSwitch: any PowerSwitch
    private let options: Options
    private let logger: Logger
    private let counters = Mutex(NMEAReceiverStats())
    private let link: ReceiverLink
    private let scanner: BaudScanner

    public convenience init(
        serialPort: any SerialPort, powerSwitch: any PowerSwitch, options: Options = Options(), logger: Logger
    ) {
        self.init(serialPort: serialPort, powerSwitch: powerSwitch, options: options, logger: logger, clock: ContinuousClock())
    }

    /// `clock` times silence and the baud scan (tests pass a virtual one).
    public init(
        serialPort: any SerialPort, powerSwitch: any PowerSwitch, options: Options = Options(), logger: Logger,
        clock: some Clock<Duration>
    ) {
        self.serialPort = serialPort
        self.powerSwitch = powerSwitch
        self.options = options
        self.logger = logger
        self.link = ReceiverLink(port: serialPort, options: options.health, clock: clock, logger: logger)
        self.scanner = BaudScanner(options: options.baudScan, clock: clock)
    }

    public var stats: NMEAReceiverStats { counters.withLock { $0 } }

    /// The link as last judged (`.connected` for a plain open port until something is wrong).
    public var linkState: ReceiverLinkState { link.current }

    /// The current link state, then every change.
    public func linkStates() -> AsyncStream<ReceiverLinkState> { link.broadcast.stream() }

    public func powerOn() async throws {
        logger.debug("GPS power on")
        try await powerSwitch.setPower(on: true)
        link.powerChanged(on: true)
    }

    public func powerOff() async throws {
        logger.debug("GPS power off")
        try await powerSwitch.setPower(on: false)
        link.powerChanged(on: false)
    }

    /// Fixes decoded from the serial port. Reading starts when the stream is first iterated, runs
    /// in the consumer's task (cancelling it stops reading), finishes when the port is closed,
    /// and throws `SerialPortError.disconnected` when the device goes away (a
    /// `ReconnectingSerialPort` never does: it waits for the device). One consumer at a time.
    public func fixes() -> AsyncThrowingStream<Fix, any Error> {
        let pump = NMEAReceiverPump(
            serialPort: serialPort, options: options, link: link, scanner: scanner, logger: logger,
            record: { [self] delta in counters.withLock { $0 = $0 + delta } })
        return AsyncThrowingStream(unfolding: { try await pump.next() })
    }
}

