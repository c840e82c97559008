import Testing

@testable import TernReceivers

@Suite struct UBXFrameTests {
    /// MON-VER poll, UBX-13003221 §32.16.15; checksum 0E 34 also worked by hand: A = 0A+04 = 0E, B = 0A+0E+0E+0E = 34.
    @Test func encodesTheMonVerPoll() {
        #expect(UBXMessages.pollVersion.bytes == bytes("B5 62 0A 04 00 00 0E 34"))
    }

    @Test func encodesAckAckForCfgPrt() {
        let sut = UBXFrame(messageClass: 0x05, messageID: 0x01, payload: [0x06, 0x00])
        #expect(sut.bytes == bytes("B5 62 05 01 02 00 06 00 0E 37"))
    }

    @Test func theLengthIsLittleEndian() {
        let sut = UBXFrame(messageClass: 0x01, messageID: 0x02, payload: [UInt8](repeating: 0, count: 0x0123))
        #expect(Array(sut.bytes[4...5]) == [0x23, 0x01])
    }

    @Test(arguments: [
        UBXFrame(messageClass: 0x06, messageID: 0x00, payload: Array(0..<20)),
        UBXFrame(messageClass: 0x0A, messageID: 0x04, payload: [UInt8](repeating: 0xFF, count: 300)),
        UBXFrame(messageClass: 0x02, messageID: 0x41, payload: [0, 0, 0, 0, 2, 0, 0, 0]),
    ])
    func theChecksumMatchesAnIndependentFletcher(frame: UBXFrame) {
        let encoded = frame.bytes
        #expect(Array(encoded.suffix(2)) == referenceFletcher(Array(encoded.dropFirst(2).dropLast(2))))
    }

    @Test func nameIsClassDashIDInHex() {
        #expect(UBXFrame(messageClass: 0x0A, messageID: 0x04).name == "0A-04")
    }

    @Test(arguments: [
        ("0100", [0x01, 0x00]), ("01 00", [0x01, 0x00]), ("0xE803", [0xE8, 0x03]), ("e8:03", [0xE8, 0x03]),
    ])
    func parsesHexPayloads(text: String, expected: [UInt8]) {
        #expect(parseHexBytes(text) == expected)
    }

    @Test(arguments: ["0", "GG", "01 0"])
    func rejectsMalformedHex(text: String) {
        #expect(parseHexBytes(text) == nil)
    }
}
