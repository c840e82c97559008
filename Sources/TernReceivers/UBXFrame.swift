/// One UBX message: `B5 62 class id length(LE U2) payload CK_A CK_B`.
///
/// The checksum is the 8-bit Fletcher algorithm over class, id, length and payload
/// ("u-blox 8 / u-blox M8 Receiver Description incl. Protocol Specification", UBX-13003221, §32.4).
public struct UBXFrame: Sendable, Hashable {
    public static let sync: [UInt8] = [0xB5, 0x62]
    /// Header (sync, class, id, length) plus checksum.
    public static let overhead = 8

    public var messageClass: UInt8
    public var messageID: UInt8
    public var payload: [UInt8]

    public init(messageClass: UInt8, messageID: UInt8, payload: [UInt8] = []) {
        self.messageClass = messageClass
        self.messageID = messageID
        self.payload = payload
    }

    /// The frame on the wire, sync through checksum.
    public var bytes: [UInt8] {
        let length = UInt16(truncatingIfNeeded: payload.count)
        let body = [messageClass, messageID, UInt8(length & 0xFF), UInt8(length >> 8)] + payload
        let (a, b) = Self.checksum(body)
        return Self.sync + body + [a, b]
    }

    /// The Fletcher-8 checksum (CK_A, CK_B) of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> (UInt8, UInt8) {
        var a: UInt8 = 0
        var b: UInt8 = 0
        for byte in bytes {
            a &+= byte
            b &+= a
        }
        return (a, b)
    }

    /// `CLASS-ID` in hex, e.g. `0A-04`.
    public var name: String {
        hex(messageClass) + "-" + hex(messageID)
    }
}

/// Two upper-case hex digits.
func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}

/// Bytes as space-separated hex, e.g. `B5 62 0A 04`.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map(hex).joined(separator: " ")
}

/// Parses hex bytes, ignoring spaces, `:` and a `0x` prefix (`"0100"`, `"01 00"`); nil when malformed.
public func parseHexBytes(_ text: String) -> [UInt8]? {
    var cleaned = Substring(text.filter { $0 != ":" && !$0.isWhitespace })
    if cleaned.hasPrefix("0x") || cleaned.hasPrefix("0X") { cleaned = cleaned.dropFirst(2) }
    guard cleaned.count.isMultiple(of: 2) else { return nil }
    var bytes: [UInt8] = []
    var index = cleaned.startIndex
    while index < cleaned.endIndex {
        let next = cleaned.index(index, offsetBy: 2)
        guard let byte = UInt8(cleaned[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
    }
    return bytes
}
