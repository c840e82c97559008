import Testing

@testable import TernReceivers

@Suite struct ChipsetDetectorTests {
    private func detect(_ lines: [String]) throws -> ChipsetDetector {
        var sut = ChipsetDetector()
        for line in lines { sut.observe(.nmea(try sentence(line))) }
        return sut
    }

    // gpsd regression suite (BSD-2-Clause), quectel-L70.log.
    @Test func pmtk705IdentifiesMediaTekWithItsFirmware() throws {
        let sut = try detect(["$PMTK705,AXN_2.51_3339_19071200,0002,QUECTEL-L70,1.0*32"])
        #expect(sut.chipset == .mediatek(firmware: "AXN_2.51_3339_19071200 build 0002 (QUECTEL-L70 1.0)"))
        #expect(sut.isConclusive)
    }

    @Test func theMTKGPSBootMessageSuggestsMediaTek() throws {
        #expect(try detect(["$PMTK011,MTKGPS*08"]).chipset == .mediatek(firmware: nil))
    }

    // gpsd regression suite (BSD-2-Clause), ublox-lea-5h.log.
    @Test func uBloxTxtBannerSuggestsUBlox() throws {
        #expect(try detect(["$GPTXT,01,01,02,u-blox ag - www.u-blox.com*50"]).chipset == .ublox(version: nil))
    }

    // gpsd regression suite (BSD-2-Clause), ublox-lea-5h.log.
    @Test func uBloxTxtVersionLinesAreCollected() throws {
        let sut = try detect([
            "$GPTXT,01,01,02,u-blox ag - www.u-blox.com*50",
            "$GPTXT,01,01,02,HW  UBX-G50xx  00040005 *53",
            "$GPTXT,01,01,02,ROM CORE       5.00    Jan 09 2006 12:00:00*76",
        ])
        #expect(sut.chipset == .ublox(version: "ROM CORE       5.00    Jan 09 2006 12:00:00"))
    }

    @Test func monVerIdentifiesUBloxConclusively() {
        var sut = ChipsetDetector()
        sut.observe(
            .ubx(
                UBXMessagesTests.monVer(
                    software: "ROM CORE 3.01 (107888)", hardware: "00080000", extensions: ["PROTVER=18.00"])))
        #expect(sut.chipset == .ublox(version: "ROM CORE 3.01 (107888), hardware 00080000, PROTVER=18.00"))
        #expect(sut.isConclusive)
    }

    @Test func conclusiveEvidenceOverridesAWeakGuess() throws {
        let sut = try detect([
            "$GPTXT,01,01,02,u-blox ag - www.u-blox.com*50", "$PMTK705,AXN_1.30,0145,Fastrax IT500,*67",
        ])
        #expect(sut.chipset == .mediatek(firmware: "AXN_1.30 build 0145 (Fastrax IT500)"))
    }

    @Test func plainNMEALeavesTheChipsetUnknown() throws {
        #expect(try detect(["$GPRMC,120000.000,A,4807.038,N,01131.000,E,0.0,0.0,010125,,,A*68"]).chipset == .unknown)
    }

    @Test func aQuectelFirmwareSelectsTheL76XDriver() {
        let driver = Chipset.mediatek(firmware: "AXN_2.51_3339_19071200 build 0002 (QUECTEL-L70 1.0)").driver
        #expect((driver as? MediaTekDriver)?.model == .quectelL76X)
    }

    @Test func protocol27OrLaterSelectsTheGen9Driver() {
        #expect((Chipset.ublox(version: "EXT CORE 4.04, PROTVER=32.01").driver as? UBloxDriver)?.generation == .gen9)
    }

    @Test func anUnknownChipsetGetsTheGenericDriver() {
        #expect(Chipset.unknown.driver is GenericNMEADriver)
    }

    @Test(arguments: [
        ("mediatek", "MediaTek MT3339 (PMTK)"), ("l76x", "Quectel L76X (PMTK)"), ("ublox", "u-blox M8 (UBX)"),
    ])
    func boardProfileNamesSelectADriver(name: String, chipset: String) {
        #expect(ReceiverDrivers.named(name)?.chipset == chipset)
    }
}
