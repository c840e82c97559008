import Testing

@testable import TernReceivers

@Suite struct UBloxDriverTests {
    let sut = UBloxDriver(generation: .m8)

    @Test func versionIsTheMonVerPoll() {
        #expect(sut.queryVersion().bytes == bytes("B5 62 0A 04 00 00 0E 34"))
    }

    @Test func theMonVerReplyAnswersTheVersionQuery() {
        let reply = ReceiverMessage.ubx(
            UBXMessagesTests.monVer(software: "ROM CORE 3.01", hardware: "00080000", extensions: []))
        #expect(sut.acknowledgement(for: sut.queryVersion(), in: reply) == .accepted)
    }

    @Test func updateRateIsCfgRateAckedByACKACK() throws {
        let command = try sut.setUpdateRate(milliseconds: 1000)
        #expect(command.bytes == bytes("B5 62 06 08 06 00 E8 03 01 00 01 00 01 39"))
        #expect(command.expectation == .ubxAck(messageClass: 0x06, messageID: 0x08))
    }

    @Test func aMatchingAckNakIsRejected() throws {
        let nak = ReceiverMessage.ubx(UBXFrame(messageClass: 0x05, messageID: 0x00, payload: [0x06, 0x08]))
        #expect(
            sut.acknowledgement(for: try sut.setUpdateRate(milliseconds: 200), in: nak)
                == .rejected(reason: "ACK-NAK: the receiver refused the message"))
    }

    @Test func anAckForAnotherMessageIsIgnored() throws {
        let ack = ReceiverMessage.ubx(UBXFrame(messageClass: 0x05, messageID: 0x01, payload: [0x06, 0x00]))
        #expect(sut.acknowledgement(for: try sut.setUpdateRate(milliseconds: 200), in: ack) == nil)
    }

    @Test func sentencesSetEveryStandardSentenceWithCfgMsg() {
        let commands = sut.configureSentences(SentenceRates(every: [.rmc, .gga]))
        #expect(commands.count == NMEASentenceKind.allCases.count)
        #expect(commands.contains { $0.bytes == bytes("B5 62 06 01 03 00 F0 03 00 FD 15") })  // GSV off
    }

    @Test func baudOnM8IsCfgPrtForUART1() throws {
        let command = try sut.setBaudRate(115_200)
        #expect(command.bytes == UBXMessages.configureUART1(baudRate: 115_200).bytes)
    }

    @Test func baudOnGen9IsAValsetOfCfgUart1Baudrate() throws {
        let command = try UBloxDriver(generation: .gen9).setBaudRate(38_400)
        #expect(command.bytes == UBXMessages.setValues([(.uart1BaudRate, 38_400)]).bytes)
    }

    @Test func sentencesOnGen9AreOneValset() {
        let commands = UBloxDriver(generation: .gen9).configureSentences(SentenceRates(every: [.rmc]))
        #expect(commands.count == 1)
        #expect(commands.first?.expectation == .ubxAck(messageClass: 0x06, messageID: 0x8A))
    }

    @Test func standbyIsPmreqBackupWakingOnUartRX() {
        #expect(sut.standby().bytes == UBXMessages.backup(milliseconds: 0, wakeSources: .uartRX).bytes)
        #expect(sut.standbyWake == .anyByte)
    }
}

@Suite struct GenericNMEADriverTests {
    @Test func hasNoCommands() {
        let sut = GenericNMEADriver()
        #expect(throws: ReceiverCommandError.notSupported(command: "standby", chipset: "generic NMEA receiver")) {
            try sut.standby()
        }
    }
}
