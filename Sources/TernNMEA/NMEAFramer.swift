/// Counters kept by `NMEAFramer`.
public struct NMEAFramerStats: Sendable, Hashable {
    /// Sentences delivered (checksum verified).
    public var sentences = 0
    /// Lines whose `*HH` did not match (or was not two hex digits).
    public var checksumErrors = 0
    /// Lines without a `*HH` checksum (rejected).
    public var missingChecksum = 0
    /// Lines at least `maxLineLength` long (dropped).
    public var overlong = 0
    /// Bytes outside any sentence, plus the bytes of sentences cut short by noise or a new `$`.
    public var garbageBytes = 0
    /// Checksum-valid lines with an unusable address (e.g. `$*00`).
    public var malformed = 0

    public init() {}

    /// Field by field: counts over several framers, and what one piece of input added.
    public static func + (lhs: Self, rhs: Self) -> Self { lhs.combined(with: rhs, +) }
    public static func - (lhs: Self, rhs: Self) -> Self { lhs.combined(with: rhs, -) }

    /// The one list of the counters.
    private func combined(with other: Self, _ op: (Int, Int) -> Int) -> Self {
        var result = Self()
        result.sentences = op(sentences, other.sentences)
        result.checksumErrors = op(checksumErrors, other.checksumErrors)
        result.missingChecksum = op(missingChecksum, other.missingChecksum)
        result.overlong = op(overlong, other.overlong)
        result.garbageBytes = op(garbageBytes, other.garbageBytes)
        result.malformed = op(malformed, other.malformed)
        return result
    }
}

/// Splits a raw byte stream from a receiver into checksum-verified sentences.
///
/// Handles partial reads (state carries over between `append` calls), CR, LF and CRLF line
/// endings, binary noise between sentences, a `$`/`!` in mid-line (which restarts the sentence),
/// over-long lines and missing or wrong checksums. Everything rejected is counted in `stats`.
public struct NMEAFramer: Sendable {
    /// Lines of this many characters or more (without the line ending) are dropped.
    /// NMEA 0183 allows 82 including CRLF; the margin admits receivers that exceed it a little.
    public static let defaultMaxLineLength = 100

    public let maxLineLength: Int
    public private(set) var stats = NMEAFramerStats()

    private var line: [UInt8] = []
    private var state = State.idle

    private enum State {
        case idle
        case inSentence
        /// Skipping the rest of an over-long line.
        case discarding
    }

    public init(maxLineLength: Int = NMEAFramer.defaultMaxLineLength) {
        self.maxLineLength = maxLineLength
        line.reserveCapacity(maxLineLength)
    }

    /// Feeds bytes as they were read; returns the sentences completed by them, in order.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [NMEASentence] {
        var sentences: [NMEASentence] = []
        append(bytes) { sentences.append($0) }
        return sentences
    }

    /// Feeds bytes as they were read; calls `deliver` with each sentence completed by them, in order.
    public mutating func append(_ bytes: some Sequence<UInt8>, deliver: (NMEASentence) -> Void) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append($0, deliver: deliver) }
        if done == nil {
            Array(bytes).withUnsafeBufferPointer { append($0, deliver: deliver) }
        }
    }

    /// Feeds bytes as they were read; calls `deliver` with each sentence completed by them, in order.
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, deliver: (NMEASentence) -> Void) {
        var index = 0
        while let sentence = nextSentence(in: bytes, from: &index) {
            deliver(sentence)
        }
    }

    /// Consumes `bytes` from `index` until a sentence completes (returned, with `index` just past
    /// the byte that completed it) or the bytes run out (nil, with `index == bytes.count`).
    /// Call again with the same `index` for the next sentence.
    ///
    /// Same state machine as byte-by-byte consumption, but runs of printable bytes inside a
    /// sentence are copied into the line buffer at once.
    mutating func nextSentence(in bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) -> NMEASentence? {
        let count = bytes.count
        while index < count {
            if state == .inSentence {
                // The run of printable bytes other than the start delimiters.
                var end = index
                while end < count {
                    let byte = bytes[end]
                    guard byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "$"), byte != UInt8(ascii: "!") else { break }
                    end += 1
                }
                if end > index {
                    let room = maxLineLength - line.count
                    if end - index >= room {
                        // The line reaches the limit after `room` bytes (at least one, as byte by
                        // byte): over-long, skip the rest of it.
                        stats.overlong += 1
                        line.removeAll(keepingCapacity: true)
                        state = .discarding
                        index += max(room, 1)
                        continue
                    }
                    line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                    index = end
                    continue
                }
            }
            let byte = bytes[index]
            index += 1
            if let sentence = consume(byte) {
                return sentence
            }
        }
        return nil
    }

    private mutating func consume(_ byte: UInt8) -> NMEASentence? {
        switch byte {
        case UInt8(ascii: "$"), UInt8(ascii: "!"):
            abandonLine()
            line.append(byte)
            state = .inSentence
            return nil
        case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
            defer {
                line.removeAll(keepingCapacity: true)
                state = .idle
            }
            return state == .inSentence ? finishLine() : nil
        default:
            switch state {
            case .idle:
                stats.garbageBytes += 1
            case .discarding:
                break
            case .inSentence:
                guard (0x20...0x7E).contains(byte) else {
                    stats.garbageBytes += 1
                    abandonLine()
                    return nil
                }
                line.append(byte)
                if line.count >= maxLineLength {
                    stats.overlong += 1
                    line.removeAll(keepingCapacity: true)
                    state = .discarding
                }
            }
            return nil
        }
    }

    /// Drops a sentence cut short (by noise or a new start delimiter), counting its bytes as garbage.
    private mutating func abandonLine() {
        if state == .inSentence {
            stats.garbageBytes += line.count
        }
        line.removeAll(keepingCapacity: true)
        state = .idle
    }

    private mutating func finishLine() -> NMEASentence? {
        switch line.withUnsafeBufferPointer(Self.verify) {
        case .missingChecksum:
            stats.missingChecksum += 1
            return nil
        case .checksumError:
            stats.checksumErrors += 1
            return nil
        case .malformed:
            stats.malformed += 1
            return nil
        case .sentence(let sentence):
            stats.sentences += 1
            return sentence
        }
    }

    private enum Verdict {
        case missingChecksum, checksumError, malformed
        case sentence(NMEASentence)
    }

    /// Checks a complete line (start delimiter included, line ending excluded) and parses it.
    private static func verify(_ line: UnsafeBufferPointer<UInt8>) -> Verdict {
        let count = line.count
        guard count >= 4, line[count - 3] == UInt8(ascii: "*") else {
            return line.contains(UInt8(ascii: "*")) ? .checksumError : .missingChecksum
        }
        guard let expected = NMEAChecksum.parse(line[count - 2], line[count - 1]) else { return .checksumError }
        var sum: UInt8 = 0
        for index in 1..<(count - 3) { sum ^= line[index] }
        guard sum == expected else { return .checksumError }
        guard let sentence = NMEASentence.parse(line: line) else { return .malformed }
        return .sentence(sentence)
    }
}
