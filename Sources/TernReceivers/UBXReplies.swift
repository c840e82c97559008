/// ACK-ACK (0x05 0x01) or ACK-NAK (0x05 0x00): the reply to every CFG message (UBX-13003221, §32.9).
public struct UBXAck: Sendable, Hashable {
    public var acknowledged: Bool
    /// Class and id of the message answered.
    public var messageClass: UInt8
    public var messageID: UInt8

    public init(acknowledged: Bool, messageClass: UInt8, messageID: UInt8) {
        self.acknowledged = acknowledged
        self.messageClass = messageClass
        self.messageID = messageID
    }

    public init?(_ frame: UBXFrame) {
        guard frame.messageClass == UBXMessages.Class.ack, frame.messageID <= 0x01, frame.payload.count == 2 else {
            return nil
        }
        self.init(acknowledged: frame.messageID == 0x01, messageClass: frame.payload[0], messageID: frame.payload[1])
    }
}

/// MON-VER (0x0A 0x04): `swVersion` CH[30], `hwVersion` CH[10], then CH[30] extensions (UBX-13003221, §32.16.15).
public struct UBXVersion: Sendable, Hashable {
    public var software: String
    public var hardware: String
    /// E.g. `ROM BASE 3.01 (107888)`, `FWVER=SPG 3.01`, `PROTVER=18.00`, `MOD=NEO-M8N-0`.
    public var extensions: [String]

    public init(software: String, hardware: String, extensions: [String] = []) {
        self.software = software
        self.hardware = hardware
        self.extensions = extensions
    }

    public init?(_ frame: UBXFrame) {
        let payload = frame.payload
        guard frame.messageClass == UBXMessages.Class.mon, frame.messageID == 0x04, payload.count >= 40,
            (payload.count - 40).isMultiple(of: 30)
        else { return nil }
        func text(_ range: Range<Int>) -> String {
            String(decoding: payload[range].prefix { $0 != 0 }, as: UTF8.self)
        }
        self.init(
            software: text(0..<30), hardware: text(30..<40),
            extensions: stride(from: 40, to: payload.count, by: 30).map { text($0..<($0 + 30)) })
    }

    /// The protocol version from the `PROTVER=` / `PROTVER ` extension, e.g. `18.00`.
    public var protocolVersion: String? {
        for item in extensions where item.hasPrefix("PROTVER") {
            return String(item.dropFirst(7).drop { $0 == "=" || $0 == " " })
        }
        return nil
    }

    /// One line for people: `ROM CORE 3.01 (107888), hardware 00080000, FWVER=SPG 3.01, PROTVER=18.00`.
    public var summary: String {
        ([software, "hardware \(hardware)"] + extensions).joined(separator: ", ")
    }
}
