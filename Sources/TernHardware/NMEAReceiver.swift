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

    public var sentences: Int { framer.sentences }
    public var checksumErrors: Int { framer.checksumErrors }
    public var fixes: Int { assembler.fixesEmitted }
}

/// A GPS receiver that speaks NMEA 0183 on a serial port, powered through a `PowerSwitch`.
public final class NMEAReceiver: GPSReceiver {
    public struct Options: Sendable {
        /// Bytes asked for per read.
        public var readSize: Int
        /// Resolves two-digit years in RMC dates (default: the system clock).
        public var referenceDate: @Sendable () -> Date
        /// See `NMEAFixAssembler.defaultUERE`.
        public var uere: Double
        public var maxLineLength: Int

        public init(
            readSize: Int = 256, referenceDate: @escaping @Sendable () -> Date = { Date() },
            uere: Double = NMEAFixAssembler.defaultUERE, maxLineLength: Int = NMEAFramer.defaultMaxLineLength
        ) {
            self.readSize = readSize
            self.referenceDate = referenceDate
            self.uere = uere
            self.maxLineLength = maxLineLength
        }
    }

    private let serialPort: any SerialPort
    private let powerSwitch: any PowerSwitch
    private let options: Options
    private let logger: Logger
    private let counters = Mutex(NMEAReceiverStats())

    public init(
        serialPort: any SerialPort, powerSwitch: any PowerSwitch, options: Options = Options(), logger: Logger
    ) {
        self.serialPort = serialPort
        self.powerSwitch = powerSwitch
        self.options = options
        self.logger = logger
    }

    public var stats: NMEAReceiverStats { counters.withLock { $0 } }

    public func powerOn() async throws {
        logger.debug("GPS power on")
        try await powerSwitch.setPower(on: true)
    }

    public func powerOff() async throws {
        logger.debug("GPS power off")
        try await powerSwitch.setPower(on: false)
    }

    /// Fixes decoded from the serial port. Reading starts when the stream is first iterated, runs
    /// in the consumer's task (cancelling it stops reading), finishes when the port is closed,
    /// and throws `SerialPortError.disconnected` when the device goes away. One consumer at a time.
    public func fixes() -> AsyncThrowingStream<Fix, any Error> {
        let pump = NMEAReceiverPump(
            serialPort: serialPort, options: options, logger: logger,
            record: { [self] delta in counters.withLock { $0.add(delta) } })
        return AsyncThrowingStream(unfolding: { try await pump.next() })
    }
}

extension NMEAReceiverStats {
    mutating func add(_ delta: NMEAReceiverStats) {
        bytes += delta.bytes
        decodeErrors += delta.decodeErrors
        framer.sentences += delta.framer.sentences
        framer.checksumErrors += delta.framer.checksumErrors
        framer.missingChecksum += delta.framer.missingChecksum
        framer.overlong += delta.framer.overlong
        framer.garbageBytes += delta.framer.garbageBytes
        framer.malformed += delta.framer.malformed
        assembler.epochs += delta.assembler.epochs
        assembler.fixesEmitted += delta.assembler.fixesEmitted
        assembler.invalidEpochs += delta.assembler.invalidEpochs
        assembler.undatedEpochs += delta.assembler.undatedEpochs
    }
}
