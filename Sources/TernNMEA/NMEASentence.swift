/// One checksum-verified NMEA 0183 sentence, split into its fields.
///
/// `$GPGGA,123519,4807.038,N,...*47` has talker `GP`, type `GGA` and fields
/// `["123519", "4807.038", "N", ...]` (the address and checksum are not fields).
/// Proprietary sentences (`$PSRFEPE,...`) have talker `P` and the rest of the address as type.
///
/// Storage: a parsed sentence keeps only `raw` and the byte offsets of its field delimiters
/// (inline, no allocation); `field(_:)` slices `raw` on demand. Sentences built from an explicit
/// field list (or with `fields`/`raw` assigned) keep that list instead.
public struct NMEASentence: Sendable {
    /// Two-letter talker identifier (`GP`, `GN`, `GL`, ...), or `P` for proprietary sentences.
    public var talker: String
    /// The sentence formatter (`GGA`, `RMC`, ...); for proprietary sentences, the address after `P`.
    public var type: String

    private var rawText: String
    /// When non-nil, the fields (authoritative); when nil, the fields are slices of `rawText`
    /// delimited by `delimiters`.
    private var explicitFields: [Substring]?
    /// UTF-8 offsets in `rawText` of the `,`/`*` ending each segment: segment 0 is the address,
    /// segment `i + 1` is field `i`, one byte each, 8 per word (segment `s` in byte `s % 8` of
    /// word `s / 8`, counting from the least significant). Only meaningful while `explicitFields`
    /// is nil; read with `delimiter(_:)`.
    private var delimiters: SIMD4<UInt64>
    /// Number of fields described by `delimiters` (segments − 1).
    private var delimitedFieldCount: Int

    /// Most segments (address + fields) a sentence can keep in `delimiters`; longer sentences
    /// (or ones with delimiters past offset 255) keep an explicit field list.
    static let inlineSegmentCapacity = 32

    public init(talker: String, type: String, fields: [Substring], raw: String) {
        self.talker = talker
        self.type = type
        self.rawText = raw
        self.explicitFields = fields
        self.delimiters = SIMD4()
        self.delimitedFieldCount = 0
    }

    private init(talker: String, type: String, raw: String, delimiters: SIMD4<UInt64>, fieldCount: Int) {
        self.talker = talker
        self.type = type
        self.rawText = raw
        self.explicitFields = nil
        self.delimiters = delimiters
        self.delimitedFieldCount = fieldCount
    }

    /// The sentence as received, from `$` (or `!`) through the checksum, without the line ending.
    public var raw: String {
        get { rawText }
        set {
            // The fields stay what they were (slices of the old text), as with stored fields.
            if explicitFields == nil { explicitFields = fields }
            rawText = newValue
        }
    }

    /// The comma-separated data fields after the address, without the checksum.
    public var fields: [Substring] {
        get {
            if let explicitFields { return explicitFields }
            var result: [Substring] = []
            result.reserveCapacity(delimitedFieldCount)
            for index in 0..<delimitedFieldCount { result.append(delimitedField(index)) }
            return result
        }
        set { explicitFields = newValue }
    }

    /// The number of fields (`fields.count`, without building the array).
    public var fieldCount: Int {
        explicitFields?.count ?? delimitedFieldCount
    }

    /// Whether this is a manufacturer-specific `$P...` sentence.
    public var isProprietary: Bool { talker == "P" }

    /// The field at `index`, or nil when the sentence is shorter or the field is empty.
    public func field(_ index: Int) -> Substring? {
        if let explicitFields {
            guard explicitFields.indices.contains(index), !explicitFields[index].isEmpty else { return nil }
            return explicitFields[index]
        }
        guard index >= 0, index < delimitedFieldCount else { return nil }
        let start = delimiter(index) + 1
        let end = delimiter(index + 1)
        guard start < end else { return nil }
        return Self.slice(rawText, start, end)
    }

    /// Calls `body` with the UTF-8 bytes of the field at `index`; nil (without calling it) when the
    /// sentence is shorter or the field is empty, as for `field(_:)`.
    ///
    /// The fast path of the decoders: no `Substring` (no retain, no index alignment).
    @inline(__always)
    func withField<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        guard explicitFields == nil else { return explicitField(index, body) }
        guard index >= 0, index < delimitedFieldCount else { return nil }
        let start = delimiter(index) + 1
        let end = delimiter(index + 1)
        guard start < end else { return nil }
        let result = rawText.utf8.withContiguousStorageIfAvailable { bytes -> Result? in
            // `delimiters` were found in this very text, so this always holds; checked anyway,
            // as the slice below is not bounds-checked in release builds.
            guard end <= bytes.count else { return nil }
            return body(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
        if let result { return result }
        // Not contiguous UTF-8 (bridged strings) or out of bounds: through a Substring.
        return explicitField(index, body)
    }

    /// `withField` through `field(_:)`.
    private func explicitField<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        guard var text = field(index) else { return nil }
        return text.withUTF8(body)
    }

    /// The byte of a one-byte field (a status or hemisphere letter); nil when the field is absent,
    /// empty or longer.
    func letterField(_ index: Int) -> UInt8? {
        withField(index) { $0.count == 1 ? $0[0] : nil } ?? nil
    }

    /// The first byte of a field; nil when the field is absent or empty.
    func firstByte(_ index: Int) -> UInt8? {
        withField(index) { $0[0] }
    }

    /// The field at `index`, empty when the field is empty; `index` must be below `fieldCount`.
    func fieldText(_ index: Int) -> Substring {
        if let explicitFields { return explicitFields[index] }
        return delimitedField(index)
    }

    /// Fields `start...` joined with commas (`fields[start...].joined(separator: ",")`); empty
    /// when there are not more than `start` fields.
    func joinedFields(from start: Int) -> String {
        guard start >= 0, fieldCount > start else { return "" }
        if let explicitFields { return explicitFields[start...].joined(separator: ",") }
        // Delimited fields are contiguous in the text: one slice from the first to the `*`.
        return String(Self.slice(rawText, delimiter(start) + 1, delimiter(delimitedFieldCount)))
    }

    /// The offset of the delimiter ending segment `segment` (≤ `delimitedFieldCount`).
    @inline(__always)
    private func delimiter(_ segment: Int) -> Int {
        Int(truncatingIfNeeded: (delimiters[segment >> 3] >> UInt64((segment & 7) << 3)) & 0xFF)
    }

    /// Field `index` (< `delimitedFieldCount`) as a slice of `rawText`.
    private func delimitedField(_ index: Int) -> Substring {
        Self.slice(rawText, delimiter(index) + 1, delimiter(index + 1))
    }

    /// `text[start..<end]` by UTF-8 offsets, through the UTF-8 view (no scalar alignment: the
    /// offsets are next to ASCII delimiters, so always on scalar boundaries).
    private static func slice(_ text: String, _ start: Int, _ end: Int) -> Substring {
        let utf8 = text.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: start)
        let upper = utf8.index(lower, offsetBy: end - start)
        return Substring(utf8[lower..<upper])
    }

    /// Parses a verified line (`$` ... `*HH`) into a sentence; nil when the address is malformed.
    ///
    /// The fields are slices of `raw`, made on demand: one string allocation per sentence.
    static func parse(raw: String) -> NMEASentence? {
        var text = raw
        return text.withUTF8 { parse(line: $0, raw: raw) }
    }

    /// Parses a verified line given as bytes; `raw` is made from them when not given.
    static func parse(line: UnsafeBufferPointer<UInt8>, raw givenRaw: String? = nil) -> NMEASentence? {
        // The last `*` ends the data (as the framer checked, the checksum follows it).
        var star = line.count - 1
        while star >= 0 && line[star] != UInt8(ascii: "*") { star -= 1 }
        guard star >= 0 else { return nil }
        // Split on bytes (the text is ASCII): delimiters of up to 32 segments inline, packed into
        // `word` and stored into `delimiters` 8 at a time (storing single bytes into a SIMD value
        // stalls on the reload).
        var delimiters = SIMD4<UInt64>()
        var word: UInt64 = 0
        func put(_ segment: Int, _ offset: Int) {
            word |= UInt64(truncatingIfNeeded: offset) << UInt64((segment & 7) << 3)
            if segment & 7 == 7 {
                delimiters[segment >> 3] = word
                word = 0
            }
        }
        var segments = 0
        var inline = star <= Int(UInt8.max)
        var addressEnd = star
        var index = 1
        while index < star {
            if line[index] == UInt8(ascii: ",") {
                if segments == 0 { addressEnd = index }
                if inline {
                    if segments < inlineSegmentCapacity - 1 {
                        put(segments, index)
                    } else {
                        inline = false
                    }
                }
                segments += 1
            }
            index += 1
        }
        if inline {
            put(segments, star)
            if segments & 7 != 7 { delimiters[segments >> 3] = word }
        }
        let fieldCount = segments  // segments counted so far = commas = fields after the address
        guard addressEnd - 1 >= 2 else { return nil }
        for position in 1..<addressEnd {
            let byte = line[position]
            guard (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) else { return nil }
        }
        let talker: String
        let type: String
        if line[1] == UInt8(ascii: "P") {
            talker = "P"
            type = String(decoding: UnsafeBufferPointer(rebasing: line[2..<addressEnd]), as: UTF8.self)
        } else {
            guard addressEnd - 1 >= 3 else { return nil }
            talker = String(decoding: UnsafeBufferPointer(rebasing: line[1..<3]), as: UTF8.self)
            type = String(decoding: UnsafeBufferPointer(rebasing: line[3..<addressEnd]), as: UTF8.self)
        }
        let raw = givenRaw ?? String(decoding: line, as: UTF8.self)
        if inline {
            return NMEASentence(talker: talker, type: type, raw: raw, delimiters: delimiters, fieldCount: fieldCount)
        }
        // Rare: too many fields or too long for inline offsets; keep an explicit field list.
        var parts: [Substring] = []
        parts.reserveCapacity(fieldCount)
        var fieldStart = addressEnd + 1
        index = addressEnd + 1
        while index < star {
            if line[index] == UInt8(ascii: ",") {
                parts.append(slice(raw, fieldStart, index))
                fieldStart = index + 1
            }
            index += 1
        }
        if addressEnd < star { parts.append(slice(raw, fieldStart, star)) }
        return NMEASentence(talker: talker, type: type, fields: parts, raw: raw)
    }
}

extension NMEASentence: Hashable {
    public static func == (lhs: NMEASentence, rhs: NMEASentence) -> Bool {
        guard lhs.talker == rhs.talker, lhs.type == rhs.type, lhs.rawText == rhs.rawText else { return false }
        // Both delimited by the same text: the same fields.
        if lhs.explicitFields == nil && rhs.explicitFields == nil { return true }
        let count = lhs.fieldCount
        guard count == rhs.fieldCount else { return false }
        for index in 0..<count where lhs.fieldText(index) != rhs.fieldText(index) { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(talker)
        hasher.combine(type)
        hasher.combine(fieldCount)
        for index in 0..<fieldCount { hasher.combine(fieldText(index)) }
        hasher.combine(rawText)
    }
}
