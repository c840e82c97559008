/// The MQTT 3.1.1 control packets a publishing client sends and receives (OASIS standard, 29 Oct 2014).
/// Values only; `MQTTPacket+Encoding` and `MQTTPacket+Decoding` turn them into bytes and back.
public enum MQTTPacket: Sendable, Hashable {
    case connect(MQTTConnect)
    /// The broker's answer to CONNECT: `sessionPresent` tells whether it kept our session.
    case connAck(sessionPresent: Bool, returnCode: MQTTConnectReturnCode)
    case publish(MQTTPublish)
    /// The broker has taken responsibility for the QoS 1 PUBLISH with this id.
    case pubAck(packetID: UInt16)
    case pingReq
    case pingResp
    case disconnect

    /// The packet type as the spec names it, for messages.
    public var name: String {
        switch self {
        case .connect: "CONNECT"
        case .connAck: "CONNACK"
        case .publish: "PUBLISH"
        case .pubAck: "PUBACK"
        case .pingReq: "PINGREQ"
        case .pingResp: "PINGRESP"
        case .disconnect: "DISCONNECT"
        }
    }
}

public enum MQTTQoS: UInt8, Sendable, Hashable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2
}

/// What the broker publishes for us when our connection ends without a DISCONNECT.
public struct MQTTWill: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// CONNECT (3.1): who we are, how the session is kept and how often we prove we are alive.
public struct MQTTConnect: Sendable, Hashable {
    public var clientID: String
    /// false: the broker keeps our session (unacknowledged messages, packet ids) across connections.
    public var cleanSession: Bool
    /// The longest silence allowed between our packets, seconds (0: no keepalive).
    public var keepAliveSeconds: UInt16
    public var will: MQTTWill?
    public var username: String?
    public var password: [UInt8]?

    public init(
        clientID: String, cleanSession: Bool, keepAliveSeconds: UInt16, will: MQTTWill? = nil,
        username: String? = nil, password: [UInt8]? = nil
    ) {
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.keepAliveSeconds = keepAliveSeconds
        self.will = will
        self.username = username
        self.password = password
    }
}

/// PUBLISH (3.3). `packetID` is present exactly when `qos` is above 0.
public struct MQTTPublish: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool
    /// Set on a retransmission of a message the broker may have seen already.
    public var dup: Bool
    public var packetID: UInt16?

    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool = false, dup: Bool = false, packetID: UInt16? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.dup = dup
        self.packetID = packetID
    }
}

/// CONNACK return codes (3.2.2.3).
public enum MQTTConnectReturnCode: UInt8, Sendable, Hashable, CustomStringConvertible {
    case accepted = 0
    case unacceptableProtocolVersion = 1
    case identifierRejected = 2
    case serverUnavailable = 3
    case badUsernameOrPassword = 4
    case notAuthorized = 5

    public var description: String {
        switch self {
        case .accepted: "0 (connection accepted)"
        case .unacceptableProtocolVersion: "1 (unacceptable protocol version)"
        case .identifierRejected: "2 (identifier rejected)"
        case .serverUnavailable: "3 (server unavailable)"
        case .badUsernameOrPassword: "4 (bad user name or password)"
        case .notAuthorized: "5 (not authorized)"
        }
    }
}

/// Bytes that are not a well-formed MQTT 3.1.1 packet, or a value that cannot be written as one.
public enum MQTTCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A remaining length longer than 4 bytes (2.2.3).
    case malformedRemainingLength
    /// A packet larger than the limit we accept or the protocol allows.
    case packetTooLarge(bytes: Int, limit: Int)
    /// A packet type a publishing client never receives (or a reserved one).
    case unexpectedPacketType(UInt8)
    /// The fixed header's flags or the remaining length do not fit the packet type.
    case malformedPacket(String)
    /// A UTF-8 string field that is invalid, too long or holds U+0000 (1.5.3).
    case invalidString(field: String, reason: String)

    public var description: String {
        switch self {
        case .malformedRemainingLength: "malformed remaining length (more than 4 bytes)"
        case let .packetTooLarge(bytes, limit): "packet of \(bytes) bytes is larger than the limit of \(limit) bytes"
        case let .unexpectedPacketType(type): "unexpected packet type \(type)"
        case let .malformedPacket(reason): "malformed packet: \(reason)"
        case let .invalidString(field, reason): "invalid string in \(field): \(reason)"
        }
    }
}
