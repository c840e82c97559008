import NIOCore
import Testing
@testable import TernUplink

/// Byte-exact vectors from the MQTT 3.1.1 specification (section and figure numbers in the names).
@Suite struct MQTTCodecTests {
    private func decode(_ bytes: [UInt8]) throws -> MQTTPacket? {
        var buffer = ByteBuffer(bytes: bytes)
        return try MQTTPacket.decode(from: &buffer)
    }

    private func remainingLength(_ value: Int) -> [UInt8] {
        var buffer = ByteBuffer()
        MQTTPacket.writeRemainingLength(value, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    @Test(arguments: [
        (0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
        (2_097_151, [0xFF, 0xFF, 0x7F]), (2_097_152, [0x80, 0x80, 0x80, 0x01]), (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
    ] as [(Int, [UInt8])])
    func remainingLengthMatchesTable2_4BothWays(value: Int, bytes: [UInt8]) throws {
        #expect(remainingLength(value) == bytes)
        let decoded = try MQTTPacket.readRemainingLength(ByteBuffer(bytes: bytes), at: 0)
        #expect(decoded?.0 == value)
        #expect(decoded?.1 == bytes.count)
    }

    @Test func aFifthRemainingLengthByteIsMalformed() {
        #expect(throws: MQTTCodecError.malformedRemainingLength) {
            try decode([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        }
    }

    @Test func stringsAreLengthPrefixedUTF8AsInFigure1_3() throws {
        var buffer = ByteBuffer()
        try MQTTPacket.writeString("A\u{2A6D4}", field: "test", into: &buffer)

        #expect(Array(buffer.readableBytesView) == [0x00, 0x05, 0x41, 0xF0, 0xAA, 0x9B, 0x94])
    }

    @Test func aStringHoldingUPlus0000CannotBeWritten() {
        var buffer = ByteBuffer()
        #expect(throws: MQTTCodecError.self) { try MQTTPacket.writeString("a\u{0}b", field: "topic", into: &buffer) }
    }

    @Test func connectWithEveryFlagMatchesTheVariableHeaderOfFigure3_6() throws {
        let will = MQTTWill(topic: "t", payload: Array("a".utf8), qos: .atLeastOnce, retain: false)
        let sut = MQTTPacket.connect(MQTTConnect(
            clientID: "tern", cleanSession: true, keepAliveSeconds: 10, will: will, username: "u", password: Array("p".utf8)))

        let bytes = try sut.encoded()

        #expect(bytes == [
            0x10, 28,
            0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0xCE, 0x00, 0x0A,  // "MQTT", level 4, flags 0xCE, keepalive 10
            0x00, 0x04, 0x74, 0x65, 0x72, 0x6E,  // client id "tern"
            0x00, 0x01, 0x74, 0x00, 0x01, 0x61,  // will topic "t", will message "a"
            0x00, 0x01, 0x75, 0x00, 0x01, 0x70,  // user name "u", password "p"
        ])
    }

    @Test func connectKeepingTheSessionWithAQoS1WillHasFlags0xCC() throws {
        let sut = MQTTPacket.connect(MQTTConnect(
            clientID: "c", cleanSession: false, keepAliveSeconds: 60,
            will: MQTTWill(topic: "t", payload: [], qos: .atLeastOnce), username: "u", password: []))

        let bytes = try sut.encoded()

        #expect(bytes[9] == 0xCC)
        #expect(bytes[10...11] == [0x00, 0x3C])
    }

    @Test func connectWithoutWillOrCredentialsHasOnlyTheCleanSessionBit() throws {
        let kept = try MQTTPacket.connect(MQTTConnect(clientID: "c", cleanSession: false, keepAliveSeconds: 0)).encoded()
        let clean = try MQTTPacket.connect(MQTTConnect(clientID: "c", cleanSession: true, keepAliveSeconds: 0)).encoded()

        #expect(kept == [0x10, 13, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x00, 0x00, 0x00, 0x00, 0x01, 0x63])
        #expect(clean[9] == 0x02)
    }

    @Test func aPasswordWithoutAUserNameCannotBeSent() {
        let sut = MQTTPacket.connect(MQTTConnect(clientID: "c", cleanSession: false, keepAliveSeconds: 0, password: [1]))

        #expect(throws: MQTTCodecError.self) { try sut.encoded() }
    }

    @Test func keptSessionNeedsAClientID() {
        let sut = MQTTPacket.connect(MQTTConnect(clientID: "", cleanSession: false, keepAliveSeconds: 0))

        #expect(throws: MQTTCodecError.self) { try sut.encoded() }
    }

    @Test func connAckCarriesSessionPresentAndTheReturnCode() throws {
        #expect(try decode([0x20, 0x02, 0x01, 0x00]) == .connAck(sessionPresent: true, returnCode: .accepted))
        #expect(try decode([0x20, 0x02, 0x00, 0x05]) == .connAck(sessionPresent: false, returnCode: .notAuthorized))
        #expect(try decode([0x20, 0x02, 0x00, 0x04]) == .connAck(sessionPresent: false, returnCode: .badUsernameOrPassword))
    }

    @Test(arguments: [[0x20, 0x02, 0x00, 0x06], [0x20, 0x02, 0x02, 0x00], [0x21, 0x02, 0x00, 0x00], [0x20, 0x03, 0x00, 0x00, 0x00]] as [[UInt8]])
    func connAckWithReservedBitsCodesOrLengthsIsMalformed(bytes: [UInt8]) {
        #expect(throws: MQTTCodecError.self) { try decode(bytes) }
    }

    @Test func qos1PublishMatchesFigure3_11AndSetsTheHeaderBits() throws {
        let publish = MQTTPublish(topic: "a/b", payload: [0x7B, 0x7D], qos: .atLeastOnce, packetID: 10)

        #expect(try MQTTPacket.publish(publish).encoded() == [0x32, 9, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x00, 0x0A, 0x7B, 0x7D])

        var retransmission = publish
        retransmission.dup = true
        #expect(try MQTTPacket.publish(retransmission).encoded().first == 0x3A)

        var retained = publish
        retained.retain = true
        #expect(try MQTTPacket.publish(retained).encoded().first == 0x33)
    }

    @Test func qos0PublishHasNoPacketID() throws {
        let publish = MQTTPublish(topic: "a", payload: [1], qos: .atMostOnce)

        #expect(try MQTTPacket.publish(publish).encoded() == [0x30, 4, 0x00, 0x01, 0x61, 1])
    }

    @Test(arguments: [
        MQTTPublish(topic: "a", payload: [], qos: .atLeastOnce),
        MQTTPublish(topic: "a", payload: [], qos: .atLeastOnce, packetID: 0),
        MQTTPublish(topic: "a/+", payload: [], qos: .atLeastOnce, packetID: 1),
        MQTTPublish(topic: "#", payload: [], qos: .atLeastOnce, packetID: 1),
        MQTTPublish(topic: "", payload: [], qos: .atLeastOnce, packetID: 1),
    ])
    func publishWithoutAValidIdOrWithAWildcardTopicCannotBeSent(publish: MQTTPublish) {
        #expect(throws: MQTTCodecError.self) { try MQTTPacket.publish(publish).encoded() }
    }

    @Test func publishRoundTripsThroughTheDecoder() throws {
        let publish = MQTTPublish(
            topic: "owntracks/alice/pi", payload: Array(repeating: 0x41, count: 300), qos: .atLeastOnce, dup: true,
            packetID: 65_535)

        #expect(try decode(try MQTTPacket.publish(publish).encoded()) == .publish(publish))
    }

    @Test func fixedSizePacketsAreTwoOrFourBytes() throws {
        #expect(try MQTTPacket.pubAck(packetID: 10).encoded() == [0x40, 0x02, 0x00, 0x0A])
        #expect(try MQTTPacket.pingReq.encoded() == [0xC0, 0x00])
        #expect(try MQTTPacket.pingResp.encoded() == [0xD0, 0x00])
        #expect(try MQTTPacket.disconnect.encoded() == [0xE0, 0x00])
        #expect(try decode([0x40, 0x02, 0x01, 0x02]) == .pubAck(packetID: 0x0102))
        #expect(try decode([0xD0, 0x00]) == .pingResp)
    }

    @Test func anIncompletePacketDecodesToNothingAndLeavesTheBuffer() throws {
        let bytes = try MQTTPacket.publish(MQTTPublish(topic: "a/b", payload: [1, 2, 3], qos: .atLeastOnce, packetID: 7)).encoded()
        var buffer = ByteBuffer()

        for byte in bytes.dropLast() {
            buffer.writeInteger(byte)
            #expect(try MQTTPacket.decode(from: &buffer) == nil)
            #expect(buffer.readerIndex == 0)
        }
        buffer.writeInteger(bytes[bytes.count - 1])

        #expect(try MQTTPacket.decode(from: &buffer) != nil)
        #expect(buffer.readableBytes == 0)
    }

    @Test func packetsArrivingTogetherDecodeOneAfterAnother() throws {
        var buffer = ByteBuffer(bytes: [0x40, 0x02, 0x00, 0x01, 0xD0, 0x00, 0x40, 0x02, 0x00])

        #expect(try MQTTPacket.decode(from: &buffer) == .pubAck(packetID: 1))
        #expect(try MQTTPacket.decode(from: &buffer) == .pingResp)
        #expect(try MQTTPacket.decode(from: &buffer) == nil)
        #expect(buffer.readableBytes == 3)
    }

    @Test(arguments: [0x50, 0x62, 0x70, 0x82, 0x90, 0xB0, 0xF0, 0x00] as [UInt8])
    func packetTypesAPublisherNeverReceivesAreRefused(firstByte: UInt8) {
        #expect(throws: MQTTCodecError.unexpectedPacketType(firstByte >> 4)) { try decode([firstByte, 0x02, 0x00, 0x01]) }
    }

    @Test func aTopicThatIsNotUTF8IsRefused() {
        #expect(throws: MQTTCodecError.self) { try decode([0x30, 0x04, 0x00, 0x02, 0xC3, 0x28]) }
    }

    @Test func aPacketLargerThanTheLimitIsRefusedBeforeItArrives() {
        var buffer = ByteBuffer(bytes: [0x30, 0x80, 0x80, 0x40])  // 1 MiB announced, nothing more sent

        #expect(throws: MQTTCodecError.packetTooLarge(bytes: 1_048_576, limit: 1000)) {
            try MQTTPacket.decode(from: &buffer, maximumSize: 1000)
        }
    }
}
