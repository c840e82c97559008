import Testing

@testable import TernReceivers

@Suite struct PMTKAckTests {
    // gpsd regression suite (BSD-2-Clause), quectel-L70.log / nl402u.log.
    @Test(arguments: [
        ("$PMTK001,314,3*36", 314, PMTKAck.Flag.succeeded),
        ("$PMTK001,320,2*30", 320, .failed),
        ("$PMTK001,424,1*30", 424, .unsupported),
    ])
    func parsesTheFieldLines(line: String, type: Int, flag: PMTKAck.Flag) throws {
        let sut = try #require(PMTKAck(try sentence(line)))
        #expect(sut == PMTKAck(packetType: type, flag: flag))
    }

    @Test func flagZeroIsInvalid() throws {
        let line = "$PMTK001,999,0*" + referenceNMEAChecksum("PMTK001,999,0")
        #expect(PMTKAck(try sentence(line))?.flag == .invalid)
    }

    @Test func anUnknownFlagIsNotAnAck() throws {
        let line = "$PMTK001,161,7*" + referenceNMEAChecksum("PMTK001,161,7")
        #expect(PMTKAck(try sentence(line)) == nil)
    }

    @Test func otherSentencesAreNotAcks() throws {
        #expect(PMTKAck(try sentence("$PMTK705,AXN_2.51_3339_19071200,0002,QUECTEL-L70,1.0*32")) == nil)
    }

    // gpsd regression suite (BSD-2-Clause), quectel-L70.log.
    @Test func parsesTheFirmwareRelease() throws {
        let sut = try #require(PMTKFirmware(try sentence("$PMTK705,AXN_2.51_3339_19071200,0002,QUECTEL-L70,1.0*32")))
        #expect(
            sut == PMTKFirmware(release: "AXN_2.51_3339_19071200", buildID: "0002", details: ["QUECTEL-L70", "1.0"]))
    }

    // gpsd regression suite (BSD-2-Clause), nl402u.log: a trailing empty field.
    @Test func dropsEmptyTrailingFirmwareFields() throws {
        let sut = try #require(PMTKFirmware(try sentence("$PMTK705,AXN_1.30,0145,Fastrax IT500,*67")))
        #expect(sut.summary == "AXN_1.30 build 0145 (Fastrax IT500)")
    }
}
