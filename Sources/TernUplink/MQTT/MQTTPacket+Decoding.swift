import NIOCore

extension MQTTPacket {
    /// Reads one packet from the front of `buffer`: nil (and the buffer untouched) while the packet is
    /// incomplete; throws on bytes that are not a packet a publishing client can receive. Packets
    /// larger than `maximumSize` bytes are refused before they are buffered.
    public static func decode(from buffer: inout ByteBuffer, maximumSize: Int = 1 << 20) throws(MQTTCodecError) -> MQTTPacket? {
        guard let firstByte = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
              let (length, lengthBytes) = try readRemainingLength(buffer, at: buffer.readerIndex + 1)
        else { return nil }
        guard length <= maximumSize else { throw .packetTooLarge(bytes: length, limit: maximumSize) }
        let headerBytes = 1 + lengthBytes
        guard var body = buffer.getSlice(at: buffer.readerIndex + headerBytes, length: length) else { return nil }
        let packet = try decodeBody(firstByte: firstByte, body: &body)
        buffer.moveReaderIndex(forwardBy: headerBytes + length)
        return packet
    }

    /// The remaining length and how many bytes it took; nil when its bytes have not all arrived.
    static func readRemainingLength(_ buffer: ByteBuffer, at index: Int) throws(MQTTCodecError) -> (Int, Int)? {
        var value = 0
        for position in 0..<4 {
            guard let byte = buffer.getInteger(at: index + position, as: UInt8.self) else { return nil }
            value += Int(byte & 0x7F) << (7 * position)
            if byte & 0x80 == 0 { return (value, position + 1) }
        }
        throw .malformedRemainingLength
    }

    private static func decodeBody(firstByte: UInt8, body: inout ByteBuffer) throws(MQTTCodecError) -> MQTTPacket {
        let type = firstByte >> 4
        let flags = firstByte & 0x0F
        switch type {
        case 2:
            try expect(flags: flags, 0, length: body.readableBytes, 2, of: "CONNACK")
            let acknowledgeFlags = body.readInteger(as: UInt8.self) ?? 0
            let code = body.readInteger(as: UInt8.self) ?? 0
            guard acknowledgeFlags & 0xFE == 0 else { throw .malformedPacket("CONNACK flags \(acknowledgeFlags)") }
            guard let returnCode = MQTTConnectReturnCode(rawValue: code) else {
                throw .malformedPacket("CONNACK return code \(code) is reserved")
            }
            return .connAck(sessionPresent: acknowledgeFlags == 1, returnCode: returnCode)
        case 3:
            return .publish(try decodePublish(flags: flags, body: &body))
        case 4:
            try expect(flags: flags, 0, length: body.readableBytes, 2, of: "PUBACK")
            return .pubAck(packetID: body.readInteger(as: UInt16.self) ?? 0)
        case 12:
            try expect(flags: flags, 0, length: body.readableBytes, 0, of: "PINGREQ")
            return .pingReq
        case 13:
            try expect(flags: flags, 0, length: body.readableBytes, 0, of: "PINGRESP")
            return .pingResp
        case 14:
            try expect(flags: flags, 0, length: body.readableBytes, 0, of: "DISCONNECT")
            return .disconnect
        default:
            throw .unexpectedPacketType(type)
        }
    }

    private static func expect(
        flags: UInt8, _ expectedFlags: UInt8, length: Int, _ expectedLength: Int, of name: String
    ) throws(MQTTCodecError) {
        guard flags == expectedFlags else { throw .malformedPacket("\(name) with fixed-header flags \(flags)") }
        guard length == expectedLength else {
            throw .malformedPacket("\(name) with remaining length \(length), expected \(expectedLength)")
        }
    }

    private static func decodePublish(flags: UInt8, body: inout ByteBuffer) throws(MQTTCodecError) -> MQTTPublish {
        guard let qos = MQTTQoS(rawValue: (flags >> 1) & 0x03) else { throw .malformedPacket("PUBLISH with QoS 3") }
        let topic = try readString(from: &body, field: "PUBLISH topic")
        var packetID: UInt16?
        if qos != .atMostOnce {
            guard let id = body.readInteger(as: UInt16.self), id != 0 else {
                throw .malformedPacket("PUBLISH with QoS \(qos.rawValue) and no packet id")
            }
            packetID = id
        }
        let payload = body.readBytes(length: body.readableBytes) ?? []
        return MQTTPublish(
            topic: topic, payload: payload, qos: qos, retain: flags & 0x01 != 0, dup: flags & 0x08 != 0, packetID: packetID)
    }

    /// A UTF-8 encoded string (1.5.3), checked as the spec requires: well-formed, no U+0000.
    static func readString(from body: inout ByteBuffer, field: String) throws(MQTTCodecError) -> String {
        guard let length = body.readInteger(as: UInt16.self), let bytes = body.readBytes(length: Int(length)) else {
            throw .malformedPacket("\(field) runs past the end of the packet")
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .invalidString(field: field, reason: "not well-formed UTF-8")
        }
        guard !bytes.contains(0) else { throw .invalidString(field: field, reason: "contains U+0000") }
        return string
    }
}
