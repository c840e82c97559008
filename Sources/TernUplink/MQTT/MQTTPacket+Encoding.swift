import NIOCore

extension MQTTPacket {
    /// The largest remaining length the protocol can express (2.2.3): 268,435,455 bytes.
    public static let maximumRemainingLength = 268_435_455

    /// Appends the packet's bytes to `buffer` (the buffer is unchanged when it throws).
    public func encode(into buffer: inout ByteBuffer) throws(MQTTCodecError) {
        var body = ByteBuffer()
        let firstByte: UInt8
        switch self {
        case let .connect(connect):
            firstByte = 0x10
            try connect.encodeBody(into: &body)
        case let .connAck(sessionPresent, returnCode):
            firstByte = 0x20
            body.writeInteger(UInt8(sessionPresent ? 1 : 0))
            body.writeInteger(returnCode.rawValue)
        case let .publish(publish):
            firstByte = 0x30 | (publish.dup ? 0x08 : 0) | publish.qos.rawValue << 1 | (publish.retain ? 0x01 : 0)
            try publish.encodeBody(into: &body)
        case let .pubAck(packetID):
            firstByte = 0x40
            body.writeInteger(packetID)
        case .pingReq:
            firstByte = 0xC0
        case .pingResp:
            firstByte = 0xD0
        case .disconnect:
            firstByte = 0xE0
        }
        guard body.readableBytes <= Self.maximumRemainingLength else {
            throw .packetTooLarge(bytes: body.readableBytes, limit: Self.maximumRemainingLength)
        }
        buffer.writeInteger(firstByte)
        Self.writeRemainingLength(body.readableBytes, into: &buffer)
        buffer.writeBuffer(&body)
    }

    /// The packet as bytes.
    public func encoded() throws(MQTTCodecError) -> [UInt8] {
        var buffer = ByteBuffer()
        try encode(into: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// The variable-length "remaining length" (2.2.3): 7 bits a byte, least significant first, the top
    /// bit set when another byte follows. `value` must be within 0...maximumRemainingLength.
    static func writeRemainingLength(_ value: Int, into buffer: inout ByteBuffer) {
        var rest = value
        repeat {
            var byte = UInt8(rest % 128)
            rest /= 128
            if rest > 0 { byte |= 0x80 }
            buffer.writeInteger(byte)
        } while rest > 0
    }

    /// A UTF-8 encoded string (1.5.3): two length bytes, then at most 65,535 bytes, without U+0000.
    static func writeString(_ string: String, field: String, into buffer: inout ByteBuffer) throws(MQTTCodecError) {
        let bytes = Array(string.utf8)
        guard !bytes.contains(0) else { throw .invalidString(field: field, reason: "contains U+0000") }
        try writeBinary(bytes, field: field, into: &buffer)
    }

    /// Binary data with a two-byte length (1.5.3 layout; used for the will message and the password).
    static func writeBinary(_ bytes: [UInt8], field: String, into buffer: inout ByteBuffer) throws(MQTTCodecError) {
        guard bytes.count <= Int(UInt16.max) else {
            throw .invalidString(field: field, reason: "\(bytes.count) bytes, more than 65535")
        }
        buffer.writeInteger(UInt16(bytes.count))
        buffer.writeBytes(bytes)
    }
}

extension MQTTConnect {
    /// Variable header (protocol name, level, flags, keepalive) and payload (3.1.2, 3.1.3).
    func encodeBody(into body: inout ByteBuffer) throws(MQTTCodecError) {
        guard password == nil || username != nil else {
            throw .invalidString(field: "CONNECT password", reason: "a password needs a user name (3.1.2.9)")
        }
        guard cleanSession || !clientID.isEmpty else {
            throw .invalidString(field: "CONNECT client id", reason: "empty, which needs a clean session (3.1.3.1)")
        }
        try MQTTPacket.writeString("MQTT", field: "protocol name", into: &body)
        body.writeInteger(4 as UInt8)  // protocol level 3.1.1
        var flags: UInt8 = cleanSession ? 0x02 : 0
        if let will {
            flags |= 0x04 | will.qos.rawValue << 3 | (will.retain ? 0x20 : 0)
        }
        if password != nil { flags |= 0x40 }
        if username != nil { flags |= 0x80 }
        body.writeInteger(flags)
        body.writeInteger(keepAliveSeconds)
        try MQTTPacket.writeString(clientID, field: "CONNECT client id", into: &body)
        if let will {
            try MQTTPacket.writeString(will.topic, field: "will topic", into: &body)
            try MQTTPacket.writeBinary(will.payload, field: "will message", into: &body)
        }
        if let username { try MQTTPacket.writeString(username, field: "user name", into: &body) }
        if let password { try MQTTPacket.writeBinary(password, field: "password", into: &body) }
    }
}

extension MQTTPublish {
    /// Topic name, packet id (QoS 1 and 2 only) and payload (3.3.2, 3.3.3).
    func encodeBody(into body: inout ByteBuffer) throws(MQTTCodecError) {
        guard !topic.isEmpty, !topic.contains(where: { $0 == "+" || $0 == "#" }) else {
            throw .invalidString(field: "PUBLISH topic", reason: "empty or holds a wildcard (+ or #): \"\(topic)\"")
        }
        try MQTTPacket.writeString(topic, field: "PUBLISH topic", into: &body)
        switch (qos, packetID) {
        case (.atMostOnce, nil):
            break
        case let (.atLeastOnce, id?) where id != 0, let (.exactlyOnce, id?) where id != 0:
            body.writeInteger(id)
        default:
            throw .malformedPacket("PUBLISH with QoS \(qos.rawValue) and packet id \(packetID.map(String.init) ?? "none")")
        }
        body.writeBytes(payload)
    }
}
