import TernNMEA

/// Something a receiver said: a checksum-verified NMEA sentence or UBX frame.
public enum ReceiverMessage: Sendable, Hashable {
    case nmea(NMEASentence)
    case ubx(UBXFrame)

    /// One line for people: the raw sentence, or the UBX frame decoded where Tern knows it.
    public var description: String {
        switch self {
        case .nmea(let sentence):
            return sentence.raw
        case .ubx(let frame):
            if let ack = UBXAck(frame) {
                return
                    "UBX \(ack.acknowledged ? "ACK-ACK" : "ACK-NAK") for \(hex(ack.messageClass))-\(hex(ack.messageID))"
            }
            if let version = UBXVersion(frame) { return "UBX MON-VER \(version.summary)" }
            return "UBX \(frame.name) [\(frame.payload.count)] \(hexString(frame.payload))"
        }
    }
}

/// Splits a receiver's byte stream into NMEA sentences and UBX frames, in order (pure, incremental).
public struct ReceiverMessageReader: Sendable {
    public private(set) var ubx = UBXFramer()
    public private(set) var nmea = NMEAFramer()

    public init() {}

    public mutating func append(_ bytes: some Sequence<UInt8>) -> [ReceiverMessage] {
        var messages: [ReceiverMessage] = []
        for output in ubx.append(bytes) {
            switch output {
            case .frame(let frame): messages.append(.ubx(frame))
            case .text(let text): messages += nmea.append(text).map(ReceiverMessage.nmea)
            }
        }
        return messages
    }
}
