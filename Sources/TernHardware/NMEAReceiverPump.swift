import Foundation
import Logging
import TernCore
import TernNMEA

/// The read loop behind one `NMEAReceiver.fixes()` stream: serial bytes → framer → decoder → assembler,
/// with the link watched on the way (silence timer, wrong-baud check, autobaud).
///
/// An actor only to make its state `Sendable` for the stream's unfolding closure; the stream
/// calls `next()` from its single consumer, one call at a time.
actor NMEAReceiverPump {
    private let serialPort: any SerialPort
    private let readSize: Int
    private let maxLineLength: Int
    private let autobaud: Bool
    private let onSentence: (@Sendable (NMEASentence) -> Void)?
    private let onBytes: (@Sendable ([UInt8]) -> Void)?
    private let link: ReceiverLink
    private let scanner: BaudScanner
    private let logger: Logger
    private let record: @Sendable (NMEAReceiverStats) -> Void
    private let decoder: NMEADecoder
    private var framer: NMEAFramer
    private var assembler: NMEAFixAssembler
    private var ready: [Fix] = []
    private var finished = false
    /// The error that ended reading, thrown once the fixes completed before it are out.
    private var failure: (any Error)?
    /// `ReceiverLink.Boundary.count` last acted on.
    private var boundariesSeen = 0
    private var quietGap: Duration
    /// When each cycle's first timed sentence was read, for `Fix.receivedAt`.
    private var arrivals = NMEAEpochArrivals()
    private let realtime: @Sendable () -> Date

    /// What one wait brought: bytes, the health timer, a quiet line, or several (when they raced).
    private struct Outcome: Sendable {
        var bytes: [UInt8] = []
        /// The system's realtime clock when the read returned them.
        var readAt: Date?
        var timerFired = false
        var quiet = false
    }

    init(
        serialPort: any SerialPort, options: NMEAReceiver.Options, link: ReceiverLink, scanner: BaudScanner,
        logger: Logger, record: @escaping @Sendable (NMEAReceiverStats) -> Void
    ) {
        self.serialPort = serialPort
        self.readSize = options.readSize
        self.maxLineLength = options.maxLineLength
        self.autobaud = options.autobaud
        self.onSentence = options.onSentence
        self.onBytes = options.onBytes
        self.link = link
        self.scanner = scanner
        self.logger = logger
        self.record = record
        self.decoder = NMEADecoder(context: NMEADecodingContext(reference: options.dateReference))
        self.framer = NMEAFramer(maxLineLength: options.maxLineLength)
        self.assembler = NMEAFixAssembler(uere: options.uere, reportsNoFixEpochs: true)
        self.quietGap = options.quietGap
        self.realtime = options.realtime
        self.boundariesSeen = link.boundaries(since: -1).count
    }

    /// The next fix; nil when the consumer was cancelled or the port closed. The epoch open when the
    /// port closes or fails is completed first; a failure is thrown after the fixes before it.
    func next() async throws -> Fix? {
        while ready.isEmpty {
            guard !finished else {
                guard let failure else { return nil }
                self.failure = nil
                throw failure
            }
            do {
                let outcome = try await readOrTimer()
                // Before anything that could complete the open epoch: a power change since discards it.
                recordingAssembler { actOnBoundaries() }
                if !outcome.bytes.isEmpty { process(outcome.bytes, readAt: outcome.readAt ?? realtime()) }
                if outcome.quiet, let fix = recordingAssembler({ assembler.lineQuiet() }) { ready.append(arrivals.stamped(fix)) }
                if outcome.timerFired { link.feed(.timerFired(now: link.now)) }
                if autobaud, link.health == .wrongBaudSuspected { try await scanBaudRates() }
            } catch is CancellationError {
                finished = true
                return nil
            } catch SerialPortError.closed {
                finish(failure: nil)
            } catch {
                if case SerialPortError.disconnected = error { link.portChanged(.gone(reason: "hang-up or I/O error")) }
                logger.error("GPS serial port failed", metadata: ["error": "\(error)"])
                finish(failure: error)
            }
        }
        return ready.removeFirst()
    }

    /// Reading is over: the open epoch is complete (the receiver said all it will).
    private func finish(failure: (any Error)?) {
        finished = true
        self.failure = failure
        link.quietTimer.schedule(at: nil)
        recordingAssembler { actOnBoundaries() }
        if let fix = recordingAssembler({ assembler.flush() }) { ready.append(arrivals.stamped(fix)) }
    }

    /// Waits for bytes, the health timer or a quiet line, whichever comes first, keeping all that raced.
    private func readOrTimer() async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask { [serialPort, readSize, realtime] in
                let bytes = try await serialPort.read(maxCount: readSize)
                return Outcome(bytes: bytes, readAt: realtime())
            }
            group.addTask { [link] in
                _ = try await link.timer.due()
                return Outcome(timerFired: true)
            }
            group.addTask { [link] in
                _ = try await link.quietTimer.due()
                return Outcome(quiet: true)
            }
            var outcome = Outcome()
            var failure: (any Error)?
            do {
                if let first = try await group.next() { outcome = first }
            } catch {
                failure = error
            }
            group.cancelAll()
            // The losers normally end with CancellationError; keep their results if they finished anyway.
            while let more = try? await group.next() {
                outcome.bytes += more.bytes
                outcome.readAt = outcome.readAt ?? more.readAt
                outcome.timerFired = outcome.timerFired || more.timerFired
                outcome.quiet = outcome.quiet || more.quiet
            }
            if let failure { throw failure }
            return outcome
        }
    }

    /// Tries the baud rates on the port (when it can change them). When one works the link is
    /// judged afresh; when none does it stays suspect, and the next garbage starts another scan.
    private func scanBaudRates() async throws {
        guard let port = serialPort as? any SerialPort & BaudRateConfigurable else {
            logger.warning("GPS link looks like the wrong baud rate, and this port cannot change it")
            return
        }
        link.setAutobauding(true)
        defer { link.setAutobauding(false) }
        let rate = try await scanner.scan(port)
        framer = NMEAFramer(maxLineLength: maxLineLength)
        recordingAssembler { assembler.discardOpenEpoch(relearn: true) }
        guard let rate else {
            logger.warning("GPS autobaud: no rate yielded valid NMEA; check the wiring")
            return
        }
        logger.notice("GPS autobaud: the receiver talks at \(rate) baud")
        link.feed(.linkOpened(now: link.now))
    }

    private func process(_ bytes: [UInt8], readAt: Date) {
        onBytes?(bytes)
        actOnBoundaries()
        let framerBefore = framer.stats
        let assemblerBefore = assembler.stats
        var decodeErrors = 0
        for sentence in framer.append(bytes) {
            onSentence?(sentence)
            do {
                let message = try decoder.decode(sentence)
                arrivals.saw(message, at: readAt)
                for fix in assembler.add(message) { ready.append(arrivals.stamped(fix)) }
            } catch {
                decodeErrors += 1
                logger.debug("undecodable NMEA sentence", metadata: ["sentence": "\(sentence.raw)", "error": "\(error)"])
            }
        }
        var delta = NMEAReceiverStats()
        delta.bytes = bytes.count
        delta.decodeErrors = decodeErrors
        delta.framer = framer.stats - framerBefore
        delta.assembler = assembler.stats - assemblerBefore
        record(delta)
        if delta.assembler.lateAfterQuiet > 0, quietGap < NMEAReceiver.Options.maxQuietGap {
            quietGap = min(quietGap * 2, NMEAReceiver.Options.maxQuietGap)
            logger.notice("GPS receiver pauses inside its cycles: waiting \(quietGap) of quiet before completing one")
        }
        link.quietTimer.schedule(at: link.quietTimer.now() + quietGap)
        link.feed(.received(
            LinkHealthMonitor.Sample(
                bytes: bytes.count, garbageBytes: delta.framer.garbageBytes,
                checksumErrors: delta.framer.checksumErrors, validSentences: delta.framer.sentences),
            now: link.now))
    }
}

extension NMEAReceiverPump {
    /// Runs `body` and records what it changed in the assembler's counters (`process` records its own).
    private func recordingAssembler<T>(_ body: () -> T) -> T {
        let before = assembler.stats
        let result = body()
        var delta = NMEAReceiverStats()
        delta.assembler = assembler.stats - before
        if delta.assembler != NMEAFixAssemblerStats() { record(delta) }
        return result
    }

    /// After a power change or a reopen, what is open belongs to the past: a partial line, an epoch.
    private func actOnBoundaries() {
        let boundary = link.boundaries(since: boundariesSeen)
        guard boundary.count != boundariesSeen else { return }
        boundariesSeen = boundary.count
        framer = NMEAFramer(maxLineLength: maxLineLength)
        assembler.discardOpenEpoch(relearn: boundary.reopened)
    }
}
