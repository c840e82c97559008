import TernNMEA

/// Bytes to write to a receiver, and what answer shows that it was taken.
public struct ReceiverCommand: Sendable, Hashable {
    public var bytes: [UInt8]
    /// For people: `$PMTK161,0*28` or `UBX CFG-PRT 06-00 …`.
    public var summary: String
    public var expectation: ReplyExpectation

    public init(bytes: [UInt8], summary: String, expectation: ReplyExpectation) {
        self.bytes = bytes
        self.summary = summary
        self.expectation = expectation
    }

    public init(_ command: PMTKCommand, expectation: ReplyExpectation? = nil) {
        let fallback: ReplyExpectation = command.packetType.map { .pmtkAck(packetType: $0) } ?? .nothing
        self.init(bytes: command.bytes, summary: command.sentence, expectation: expectation ?? fallback)
    }

    public init(_ frame: UBXFrame, expectation: ReplyExpectation? = nil) {
        let fallback: ReplyExpectation =
            frame.messageClass == UBXMessages.Class.cfg
            ? .ubxAck(messageClass: frame.messageClass, messageID: frame.messageID) : .nothing
        self.init(
            bytes: frame.bytes, summary: "UBX \(frame.name) \(hexString(frame.bytes))",
            expectation: expectation ?? fallback)
    }
}

/// The reply that settles a command.
public enum ReplyExpectation: Sendable, Hashable {
    /// `$PMTK001,<packetType>,<flag>`.
    case pmtkAck(packetType: Int)
    /// A proprietary reply sentence, e.g. type `MTK705` for PMTK605.
    case sentence(type: String)
    /// A PMTK query's reply sentence (`MTK705` for 605), or a PMTK001 refusing `packetType`.
    case pmtkReply(packetType: Int, type: String)
    /// ACK-ACK / ACK-NAK for this class and id.
    case ubxAck(messageClass: UInt8, messageID: UInt8)
    /// A UBX frame of this class and id (a poll's answer).
    case ubxFrame(messageClass: UInt8, messageID: UInt8)
    /// Any valid message: the receiver is awake and talking.
    case anyMessage
    /// No reply is expected (e.g. the receiver sleeps or switches baud rate at once).
    case nothing
}

/// How a command was answered.
public enum AckResult: Sendable, Hashable {
    case accepted
    /// The receiver answered and refused; `reason` says how (`unsupported`, `ACK-NAK`, …).
    case rejected(reason: String)
}

extension ReplyExpectation {
    /// Whether `message` settles a command expecting this, and how; nil if unrelated.
    public func result(for message: ReceiverMessage) -> AckResult? {
        switch (self, message) {
        case (.pmtkAck(let packetType), .nmea(let sentence)):
            guard let ack = PMTKAck(sentence), ack.packetType == packetType else { return nil }
            switch ack.flag {
            case .succeeded: return .accepted
            case .invalid: return .rejected(reason: "invalid packet (PMTK001 flag 0)")
            case .unsupported: return .rejected(reason: "unsupported by this firmware (PMTK001 flag 1)")
            case .failed: return .rejected(reason: "valid but the action failed (PMTK001 flag 2)")
            }
        case (.sentence(let type), .nmea(let sentence)):
            return sentence.isProprietary && sentence.type == type ? .accepted : nil
        case (.pmtkReply(let packetType, let type), .nmea):
            if let refusal = ReplyExpectation.pmtkAck(packetType: packetType).result(for: message), refusal != .accepted
            {
                return refusal
            }
            return ReplyExpectation.sentence(type: type).result(for: message)
        case (.ubxAck(let messageClass, let messageID), .ubx(let frame)):
            guard let ack = UBXAck(frame), ack.messageClass == messageClass, ack.messageID == messageID else {
                return nil
            }
            return ack.acknowledged ? .accepted : .rejected(reason: "ACK-NAK: the receiver refused the message")
        case (.ubxFrame(let messageClass, let messageID), .ubx(let frame)):
            return frame.messageClass == messageClass && frame.messageID == messageID ? .accepted : nil
        case (.anyMessage, _):
            return .accepted
        default:
            return nil
        }
    }
}
