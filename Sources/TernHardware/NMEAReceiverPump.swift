import Foundation
import Logging
import TernCore
import TernNMEA

/// The read loop behind one `NMEAReceiver.fixes()` stream: serial bytes → framer → decoder → assembler.
///
/// An actor only to make its state `Sendable` for the stream's unfolding closure; the stream
/// calls `next()` from its single consumer, one call at a time.
actor NMEAReceiverPump {
    private let serialPort: any SerialPort
    private let readSize: Int
    private let logger: Logger
    private let record: @Sendable (NMEAReceiverStats) -> Void
    private let decoder: NMEADecoder
    private var framer: NMEAFramer
    private var assembler: NMEAFixAssembler
    private var ready: [Fix] = []
    private var finished = false

    init(
        serialPort: any SerialPort, options: NMEAReceiver.Options, logger: Logger,
        record: @escaping @Sendable (NMEAReceiverStats) -> Void
    ) {
        self.serialPort = serialPort
        self.readSize = options.readSize
        self.logger = logger
        self.record = record
        self.decoder = NMEADecoder(context: NMEADecodingContext(referenceDate: options.referenceDate))
        self.framer = NMEAFramer(maxLineLength: options.maxLineLength)
        self.assembler = NMEAFixAssembler(uere: options.uere)
    }

    /// The next fix; nil when the consumer was cancelled or the port closed.
    func next() async throws -> Fix? {
        while ready.isEmpty {
            guard !finished else { return nil }
            let bytes: [UInt8]
            do {
                bytes = try await serialPort.read(maxCount: readSize)
            } catch is CancellationError {
                finished = true
                return nil
            } catch SerialPortError.closed {
                finished = true
                return nil
            } catch {
                finished = true
                logger.error("GPS serial port failed", metadata: ["error": "\(error)"])
                throw error
            }
            process(bytes)
        }
        return ready.removeFirst()
    }

    private func process(_ bytes: [UInt8]) {
        let framerBefore = framer.stats
        let assemblerBefore = assembler.stats
        var decodeErrors = 0
        for sentence in framer.append(bytes) {
            do {
                if let fix = assembler.add(try decoder.decode(sentence)) {
                    ready.append(fix)
                }
            } catch {
                decodeErrors += 1
                logger.debug("undecodable NMEA sentence", metadata: ["sentence": "\(sentence.raw)", "error": "\(error)"])
            }
        }
        var delta = NMEAReceiverStats()
        delta.bytes = bytes.count
        delta.decodeErrors = decodeErrors
        delta.framer = framer.stats.subtracting(framerBefore)
        delta.assembler = assembler.stats.subtracting(assemblerBefore)
        record(delta)
    }
}

extension NMEAFramerStats {
    func subtracting(_ other: Self) -> Self {
        var result = Self()
        result.sentences = sentences - other.sentences
        result.checksumErrors = checksumErrors - other.checksumErrors
        result.missingChecksum = missingChecksum - other.missingChecksum
        result.overlong = overlong - other.overlong
        result.garbageBytes = garbageBytes - other.garbageBytes
        result.malformed = malformed - other.malformed
        return result
    }
}

extension NMEAFixAssemblerStats {
    func subtracting(_ other: Self) -> Self {
        var result = Self()
        result.epochs = epochs - other.epochs
        result.fixesEmitted = fixesEmitted - other.fixesEmitted
        result.invalidEpochs = invalidEpochs - other.invalidEpochs
        result.undatedEpochs = undatedEpochs - other.undatedEpochs
        return result
    }
}
