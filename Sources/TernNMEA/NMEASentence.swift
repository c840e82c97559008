/// One checksum-verified NMEA 0183 sentence, split into its fields.
///
/// `$GPGGA,123519,4807.038,N,...*47` has talker `GP`, type `GGA` and fields
/// `["123519", "4807.038", "N", ...]` (the address and checksum are not fields).
/// Proprietary sentences (`$PSRFEPE,...`) have talker `P` and the rest of the address as type.
public struct NMEASentence: Sendable, Hashable {
    /// Two-letter talker identifier (`GP`, `GN`, `GL`, ...), or `P` for proprietary sentences.
    public var talker: String
    /// The sentence formatter (`GGA`, `RMC`, ...); for proprietary sentences, the address after `P`.
    public var type: String
    /// The comma-separated data fields after the address, without the checksum.
    public var fields: [Substring]
    /// The sentence as received, from `$` (or `!`) through the checksum, without the line ending.
    public var raw: String

    public init(talker: String, type: String, fields: [Substring], raw: String) {
        self.talker = talker
        self.type = type
        self.fields = fields
        self.raw = raw
    }

    /// Whether this is a manufacturer-specific `$P...` sentence.
    public var isProprietary: Bool { talker == "P" }

    /// The field at `index`, or nil when the sentence is shorter or the field is empty.
    public func field(_ index: Int) -> Substring? {
        guard fields.indices.contains(index), !fields[index].isEmpty else { return nil }
        return fields[index]
    }

    /// Parses a verified line (`$` ... `*HH`) into a sentence; nil when the address is malformed.
    ///
    /// The fields are slices of `raw`: one string allocation per sentence, plus the field array.
    static func parse(raw: String) -> NMEASentence? {
        let utf8 = raw.utf8
        guard let star = utf8.lastIndex(of: UInt8(ascii: "*")) else { return nil }
        // Split on the UTF-8 view: Character-based splitting is far slower and the text is ASCII.
        var parts: [Substring] = []
        parts.reserveCapacity(20)
        var fieldStart = utf8.index(after: utf8.startIndex)
        var index = fieldStart
        while index < star {
            if utf8[index] == UInt8(ascii: ",") {
                parts.append(raw[fieldStart..<index])
                fieldStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(raw[fieldStart..<star])
        let address = parts[0].utf8
        guard address.count >= 2,
            address.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) })
        else { return nil }
        let addressText = parts.removeFirst()
        if address.first == UInt8(ascii: "P") {
            return NMEASentence(talker: "P", type: String(addressText.dropFirst()), fields: parts, raw: raw)
        }
        guard address.count >= 3 else { return nil }
        let typeStart = address.index(address.startIndex, offsetBy: 2)
        return NMEASentence(
            talker: String(addressText[..<typeStart]), type: String(addressText[typeStart...]), fields: parts, raw: raw)
    }
}
