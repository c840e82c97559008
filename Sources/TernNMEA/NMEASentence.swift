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

    /// Parses a verified line body (`$` ... before `*`) into a sentence; nil when the address is malformed.
    static func parse(body: String, raw: String) -> NMEASentence? {
        let parts = body.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
        guard let address = parts.first,
            address.count >= 2,
            address.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) })
        else { return nil }
        let fields = Array(parts.dropFirst())
        if address.first == "P" {
            return NMEASentence(talker: "P", type: String(address.dropFirst()), fields: fields, raw: raw)
        }
        guard address.count >= 3 else { return nil }
        return NMEASentence(
            talker: String(address.prefix(2)), type: String(address.dropFirst(2)), fields: fields, raw: raw)
    }
}
