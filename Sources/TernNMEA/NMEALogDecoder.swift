import Foundation
import TernCore

/// Counters kept by `NMEALogDecoder`.
public struct NMEALogDecoderStats: Sendable, Hashable {
    public var bytes = 0
    /// `#` comment lines skipped.
    public var comments = 0
    /// Sentences of a known type that failed to decode (bad field values).
    public var decodeErrors = 0
    public var framer = NMEAFramerStats()
    public var assembler = NMEAFixAssemblerStats()

    public init() {}
}

/// Decodes an NMEA log (or live stream) into fixes: framing, decoding and epoch assembly in one
/// streaming pass, with constant memory. The code path of `tern nmea decode`.
///
/// Lines starting with `#` are comments; a `# Date: yyyy-mm-dd` comment (as in gpsd's regression
/// logs) sets the reference date for two-digit years and GPS week rollover from then on.
public struct NMEALogDecoder: Sendable {
    private var framer = NMEAFramer()
    private var decoder: NMEADecoder
    private var assembler: NMEAFixAssembler
    private var atLineStart = true
    private var inComment = false
    private var comment: [UInt8] = []
    private var counters = NMEALogDecoderStats()

    /// `reference` until a `# Date:` comment says more (the build date by default).
    /// - Parameter amendsCompletedEpochs: a log is decoded whole: by default a sentence after its
    ///   cycle's learnt end amends the epoch, as gpsd does (the epoch is emitted again). `false` is the
    ///   live path's rule (`NMEAReceiverPump`): the late sentence is dropped, as a fix already acted on.
    public init(
        reference: NMEADateReference = .notBefore(NMEADecodingContext.buildReferenceDate),
        uere: Double = NMEAFixAssembler.defaultUERE, amendsCompletedEpochs: Bool = true
    ) {
        decoder = NMEADecoder(context: NMEADecodingContext(reference: { reference }))
        assembler = NMEAFixAssembler(uere: uere, amendsCompletedEpochs: amendsCompletedEpochs)
    }

    public var stats: NMEALogDecoderStats {
        var stats = counters
        stats.framer = framer.stats
        stats.assembler = assembler.stats
        return stats
    }

    /// Feeds bytes as they were read; calls `emit` with each completed fix, in order.
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, emit: (Fix) -> Void) {
        counters.bytes += bytes.count
        var segmentStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if inComment {
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                    endComment()
                    segmentStart = index + 1
                    atLineStart = true
                } else if comment.count < 256 {
                    comment.append(byte)
                }
            } else if atLineStart && byte == UInt8(ascii: "#") {
                frame(UnsafeBufferPointer(rebasing: bytes[segmentStart..<index]), emit: emit)
                inComment = true
            } else if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                atLineStart = true
            } else {
                // Inside a line: nothing changes until the next line end.
                atLineStart = false
                index += 1
                while index < count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") {
                    index += 1
                }
                continue
            }
            index += 1
        }
        if !inComment, segmentStart < count {
            frame(UnsafeBufferPointer(rebasing: bytes[segmentStart..<count]), emit: emit)
        }
    }

    /// Feeds bytes as they were read; calls `emit` with each completed fix, in order.
    public mutating func append(_ bytes: [UInt8], emit: (Fix) -> Void) {
        bytes.withUnsafeBufferPointer { append($0, emit: emit) }
    }

    /// Ends the stream: completes the last epoch.
    public mutating func finish(emit: (Fix) -> Void) {
        if inComment { endComment() }
        if let fix = assembler.flush() { emit(fix) }
    }

    private mutating func frame(_ bytes: UnsafeBufferPointer<UInt8>, emit: (Fix) -> Void) {
        guard !bytes.isEmpty else { return }
        var index = 0
        while let sentence = framer.nextSentence(in: bytes, from: &index) {
            let message: NMEAMessage
            do {
                message = try decoder.decode(sentence)
            } catch {
                counters.decodeErrors += 1
                continue
            }
            for fix in assembler.add(message) { emit(fix) }
        }
    }

    private mutating func endComment() {
        counters.comments += 1
        inComment = false
        if let date = Self.headerDate(comment) {
            decoder.context = NMEADecodingContext(reference: date)
        }
        comment.removeAll(keepingCapacity: true)
    }

    /// The date of a `# Date: yyyy-m-d...` comment (bytes after `#`); nil for other comments.
    public static func headerDate(_ comment: [UInt8]) -> Date? {
        let text = String(decoding: comment, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("Date:") else { return nil }
        let numbers = text.dropFirst(5).split(whereSeparator: { !$0.isNumber }).prefix(3).compactMap { Int($0) }
        guard numbers.count == 3, numbers[0] > 1980, let date = NMEADate(year: numbers[0], month: numbers[1], day: numbers[2])
        else { return nil }
        return Date(timeIntervalSince1970: Double(date.daysSinceEpoch) * 86_400)
    }
}
