import Testing

@testable import TernReceivers

@Suite struct ReceiverActionTests {
    @Test(arguments: [
        (["standby"], ReceiverAction.standby), (["rate", "200"], .rate(milliseconds: 200)),
        (["baud", "115200"], .baud(115_200)),
        (["raw", "$PMTK605*31"], .raw("PMTK605")), (["ubx", "0A", "04"], .ubx(UBXMessages.pollVersion)),
        (["sentences", "rmc,GSV=5"], .sentences(SentenceRates([.rmc: 1, .gsv: 5]))),
    ])
    func parsesTheWords(words: [String], expected: ReceiverAction) throws {
        #expect(try ReceiverAction.parse(words) == expected)
    }

    @Test(arguments: [
        ["fly"], [], ["rate"], ["rate", "fast"], ["standby", "now"], ["sentences", "XYZ"], ["ubx", "0A"],
        ["raw", "PMTK*605"],
    ])
    func rejectsBadWords(words: [String]) {
        #expect(throws: ReceiverCommandError.self) { try ReceiverAction.parse(words) }
    }

    @Test func rawAddsDollarAndChecksum() throws {
        let commands = try ReceiverAction.raw("PMTK605").commands(using: GenericNMEADriver())
        #expect(commands.map(\.bytes) == [Array("$PMTK605*31\r\n".utf8)])
    }

    @Test(arguments: [
        ("PMTK605", ReplyExpectation.pmtkReply(packetType: 605, type: "MTK705")),
        ("PMTK414", .pmtkReply(packetType: 414, type: "MTK514")),
        ("PMTK220,200", .pmtkAck(packetType: 220)), ("PQTXT,W,0,1", .nothing),
    ])
    func rawPacketsExpectTheirReply(body: String, expected: ReplyExpectation) {
        #expect(ReceiverAction.expectation(forRaw: body) == expected)
    }

    @Test func aUbxCfgMessageExpectsAnAck() throws {
        let commands = try ReceiverAction.parse(["ubx", "06", "08", "E803 0100 0100"]).commands(
            using: GenericNMEADriver())
        #expect(commands.first?.bytes == bytes("B5 62 06 08 06 00 E8 03 01 00 01 00 01 39"))
        #expect(commands.first?.expectation == .ubxAck(messageClass: 0x06, messageID: 0x08))
    }

    @Test func aUbxPollExpectsTheSameMessage() {
        #expect(
            ReceiverAction.expectation(for: UBXMessages.pollVersion) == .ubxFrame(messageClass: 0x0A, messageID: 0x04))
    }

    @Test func chipsetCommandsGoThroughTheDriver() throws {
        #expect(try ReceiverAction.standby.commands(using: MediaTekDriver()).map(\.summary) == ["$PMTK161,0*28"])
    }
}

@Suite struct ReceiverMessageReaderTests {
    @Test func yieldsSentencesAndFramesInStreamOrder() throws {
        var sut = ReceiverMessageReader()
        let ack = UBXFrame(messageClass: 0x05, messageID: 0x01, payload: [0x06, 0x00])
        let messages = sut.append(
            Array("$PMTK001,161,3*36\r\n".utf8) + ack.bytes + Array("$PMTK011,MTKGPS*08\r\n".utf8))
        #expect(
            messages == [
                .nmea(try sentence("$PMTK001,161,3*36")), .ubx(ack), .nmea(try sentence("$PMTK011,MTKGPS*08")),
            ])
    }

    @Test func describesAnAckForPeople() {
        let ack = ReceiverMessage.ubx(UBXFrame(messageClass: 0x05, messageID: 0x00, payload: [0x06, 0x8A]))
        #expect(ack.description == "UBX ACK-NAK for 06-8A")
    }
}
