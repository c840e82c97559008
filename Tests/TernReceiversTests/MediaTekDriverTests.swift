import Testing

@testable import TernReceivers

@Suite struct MediaTekDriverTests {
    let sut = MediaTekDriver()

    @Test func standbyIsPMTK161AndExpectsItsAck() {
        let command = sut.standby()
        #expect(command.bytes == Array("$PMTK161,0*28\r\n".utf8))
        #expect(command.expectation == .pmtkAck(packetType: 161))
    }

    @Test func backupIsPerpetualBackupWithoutReply() {
        #expect(
            sut.backup()
                == ReceiverCommand(
                    bytes: Array("$PMTK225,4*2F\r\n".utf8), summary: "$PMTK225,4*2F", expectation: .nothing))
    }

    @Test func updateRateIsPMTK220() throws {
        #expect(try sut.setUpdateRate(milliseconds: 1000).summary == "$PMTK220,1000*1F")
    }

    @Test func anUpdateRateFasterThan10HzIsRejected() {
        #expect(throws: ReceiverCommandError.self) { try sut.setUpdateRate(milliseconds: 50) }
    }

    @Test func baudIsPMTK251AndExpectsNoAck() throws {
        let command = try sut.setBaudRate(115_200)
        #expect(command.summary == "$PMTK251,115200*1F")
        #expect(command.expectation == .nothing)
    }

    @Test func anUnsupportedBaudIsRejected() {
        #expect(throws: ReceiverCommandError.self) { try sut.setBaudRate(12_345) }
    }

    @Test func sentencesAreOnePMTK314() {
        let commands = sut.configureSentences(SentenceRates([.rmc: 1, .gga: 1, .gsa: 1, .gsv: 5]))
        #expect(commands.map(\.summary) == ["$PMTK314,0,1,0,1,1,5,0,0,0,0,0,0,0,0,0,0,0,0,0*2C"])
    }

    @Test func versionIsPMTK605AnsweredByPMTK705() {
        #expect(sut.queryVersion().summary == "$PMTK605*31")
        #expect(sut.queryVersion().expectation == .pmtkReply(packetType: 605, type: "MTK705"))
    }

    @Test func aMatchingSuccessAckIsAccepted() throws {
        let ack = ReceiverMessage.nmea(try sentence("$PMTK001,161,3*36"))
        #expect(sut.acknowledgement(for: sut.standby(), in: ack) == .accepted)
    }

    @Test func anAckForAnotherPacketIsIgnored() throws {
        let ack = ReceiverMessage.nmea(try sentence("$PMTK001,314,3*36"))
        #expect(sut.acknowledgement(for: sut.standby(), in: ack) == nil)
    }

    // gpsd regression suite (BSD-2-Clause), nl402u.log.
    @Test func anUnsupportedAckIsRejected() throws {
        let ack = ReceiverMessage.nmea(try sentence("$PMTK001,424,1*30"))
        let result = sut.acknowledgement(for: ReceiverCommand(.raw("PMTK424")), in: ack)
        #expect(result == .rejected(reason: "unsupported by this firmware (PMTK001 flag 1)"))
    }

    @Test func theFirmwareReplyAnswersTheVersionQuery() throws {
        let reply = ReceiverMessage.nmea(try sentence("$PMTK705,AXN_2.51_3339_19071200,0002,QUECTEL-L70,1.0*32"))
        #expect(sut.acknowledgement(for: sut.queryVersion(), in: reply) == .accepted)
    }

    @Test func anyOutputAnswersWake() throws {
        let output = ReceiverMessage.nmea(
            try sentence("$GPRMC,120000.000,A,4807.038,N,01131.000,E,0.0,0.0,010125,,,A*68"))
        #expect(sut.acknowledgement(for: sut.wake(), in: output) == .accepted)
    }

    @Test func theMT3339StandbyWakesOnAnyByte() {
        #expect(sut.standbyWake == .anyByte)
    }

    @Test func theL76XLeavesBackupOnAFORCEONPulseOfAtLeast100ms() {
        #expect(MediaTekDriver(model: .quectelL76X).backupWake == .forceOnPulse(minimum: .milliseconds(100)))
    }
}

@Suite struct PMTKQueryReplyTests {
    // gpsd regression suite (BSD-2-Clause), nl402u.log.
    @Test func aRefusalOfTheQueryRejectsIt() throws {
        let sut = ReplyExpectation.pmtkReply(packetType: 424, type: "MTK524")
        #expect(
            sut.result(for: .nmea(try sentence("$PMTK001,424,1*30")))
                == .rejected(reason: "unsupported by this firmware (PMTK001 flag 1)"))
    }
}
