import Testing

@testable import TernReceivers

/// Vectors from the MTK NMEA Packet User Manual / Adafruit and Quectel application notes,
/// each also cross-checked with `referenceNMEAChecksum`.
@Suite struct PMTKCommandTests {
    @Test(arguments: [
        (PMTKCommand.standby, "$PMTK161,0*28"),
        (.setFixInterval(milliseconds: 1000), "$PMTK220,1000*1F"),
        (.setBaudRate(115_200), "$PMTK251,115200*1F"),
        (.powerMode(.perpetualBackup), "$PMTK225,4*2F"),
        (.queryFirmware, "$PMTK605*31"),
        (.restoreDefaultSentenceOutput, "$PMTK314,-1*04"),
        (.test, "$PMTK000*32"),
        (.hotRestart, "$PMTK101*32"),
        (
            .powerMode(
                .periodicStandby(
                    PMTKPeriod(
                        runMilliseconds: 3000, sleepMilliseconds: 12000, secondRunMilliseconds: 18000,
                        secondSleepMilliseconds: 72000))),
            "$PMTK225,2,3000,12000,18000,72000*15"
        ),
    ])
    func encodesTheDocumentedSentence(command: PMTKCommand, expected: String) {
        #expect(command.sentence == expected)
    }

    @Test(arguments: ["PMTK161,0", "PMTK220,1000", "PMTK251,115200", "PMTK225,4", "PMTK605", "PMTK314,-1"])
    func theChecksumMatchesAnIndependentXOR(body: String) {
        let sut = PMTKCommand.raw(body)
        #expect(sut.sentence == "$\(body)*\(referenceNMEAChecksum(body))")
    }

    @Test func sentenceSelectionEncodesAll19FieldsInManualOrder() {
        let sut = PMTKCommand.setSentenceOutput(SentenceRates([.rmc: 1, .gga: 1, .gsa: 1, .gsv: 5]))
        #expect(sut.sentence == "$PMTK314,0,1,0,1,1,5,0,0,0,0,0,0,0,0,0,0,0,0,0*2C")
    }

    @Test func zdaIsTheEighteenthField() {
        let sut = PMTKCommand.setSentenceOutput(SentenceRates([.zda: 1]))
        #expect(
            sut.body.split(separator: ",").dropFirst().map(String.init)
                == ["0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "1", "0"])
    }

    @Test func bytesEndWithCRLF() {
        #expect(PMTKCommand.standby.bytes == Array("$PMTK161,0*28\r\n".utf8))
    }

    @Test(arguments: [(PMTKCommand.standby, 161), (.queryFirmware, 605), (.test, 0), (.raw("PMTK220,200"), 220)])
    func packetTypeIsTheNumberAfterPMTK(command: PMTKCommand, type: Int) {
        #expect(command.packetType == type)
    }

    @Test func aNonPMTKRawBodyHasNoPacketType() {
        #expect(PMTKCommand.raw("PQTXT,W,0,1").packetType == nil)
    }
}
