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
        for byte in bytes {
            if let sentence = consume(byte) {
                sentences.append(sentence)
            }
        }
        return sentences
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
        let count = line.count
        guard line.contains(UInt8(ascii: "*")) else {
            stats.missingChecksum += 1
            return nil
        }
        guard count >= 4, line[count - 3] == UInt8(ascii: "*"),
            let expected = NMEAChecksum.parse(line[count - 2], line[count - 1]),
            NMEAChecksum.compute(line[1..<(count - 3)]) == expected
        else {
            stats.checksumErrors += 1
            return nil
        }
        let raw = String(decoding: line, as: UTF8.self)
        guard let sentence = NMEASentence.parse(raw: raw) else {
            stats.malformed += 1
            return nil
        }
        stats.sentences += 1
        return sentence
    }
}
