import Foundation
import TernCore
import Testing

@testable import TernNMEA

struct GNSMessageTests {
    @Test func decodesPositionAltitudeAndSatellites() throws {
        guard case let .gns(sut) = try decode(Corpus.gnGNS) else { Issue.record("not GNS"); return }
        #expect(abs((sut.coordinate?.latitude ?? 0) - 44.0690105) < 1e-8)
        #expect(sut.altitude == 1147.2)
        #expect(sut.satellites == 12)
    }

    @Test func isValidWhenAnyConstellationHasAFix() throws {
        guard case let .gns(sut) = try decode(Corpus.gnGNS) else { Issue.record("not GNS"); return }
        #expect(sut.isValid)
        #expect(sut.quality == .gps)
    }
}

struct GLLMessageTests {
    @Test func decodesPositionTimeAndStatus() throws {
        guard case let .gll(sut) = try decode(Corpus.gllV3) else { Issue.record("not GLL"); return }
        #expect(sut.time == NMEATimeOfDay(hour: 17, minute: 19, second: 47))
        #expect(sut.isValid)
        #expect(abs((sut.coordinate?.longitude ?? 0) - -121.3142281667) < 1e-8)
    }
}

struct GSAMessageTests {
    @Test func decodesModeSatellitesAndDOPs() throws {
        guard case let .gsa(sut) = try decode(Corpus.bu353GSA) else { Issue.record("not GSA"); return }
        #expect(sut.mode == .threeD)
        #expect(sut.satellites == [17, 28, 6, 1, 30, 20, 26, 13])
        #expect(sut.pdop == 1.8 && sut.hdop == 1.1 && sut.vdop == 1.5)
    }

    @Test func takesTheConstellationFromTheNMEA410SystemID() throws {
        guard case let .gsa(sut) = try decode(Corpus.gsa410) else { Issue.record("not GSA"); return }
        #expect(sut.systemID == 1)
        #expect(sut.constellation == .gps)
    }
}

struct GSVMessageTests {
    @Test func decodesSatellitesInViewAndEntries() throws {
        guard case let .gsv(sut) = try decode(Corpus.gsvGL) else { Issue.record("not GSV"); return }
        #expect(sut.satellitesInView == 9)
        #expect(sut.satellites.count == 4)
        #expect(sut.satellites.first == GSVMessage.Satellite(id: 65, elevation: 42, azimuth: 50, snr: 28))
        #expect(sut.signalID == nil)
    }
}

struct VTGMessageTests {
    @Test func decodesCourseAndSpeedInMetresPerSecond() throws {
        guard case let .vtg(sut) = try decode(Corpus.vtg) else { Issue.record("not VTG"); return }
        #expect(sut.course == 54.7)
        #expect(abs((sut.speed ?? 0) - 5.5 * RMCMessage.metresPerSecondPerKnot) < 1e-9)
    }
}

struct ZDAMessageTests {
    @Test func decodesAFourDigitYearDate() throws {
        guard case let .zda(sut) = try decode(Corpus.zda, reference: Date(timeIntervalSince1970: 1_198_000_000)) else {
            Issue.record("not ZDA")
            return
        }
        #expect(sut.date == NMEADate(year: 2007, month: 12, day: 23))
    }
}

struct GSTMessageTests {
    @Test func decodesTheSigmas() throws {
        guard case let .gst(sut) = try decode(Corpus.gst) else { Issue.record("not GST"); return }
        #expect(sut.sigmaLatitude == 0.023 && sut.sigmaLongitude == 0.020 && sut.sigmaAltitude == 0.031)
    }
}

struct TXTMessageTests {
    @Test func decodesTheText() throws {
        guard case let .txt(sut) = try decode(Corpus.txt) else { Issue.record("not TXT"); return }
        #expect(sut.text == "ANTSTATUS=OK")
        #expect(sut.kind == 2)
    }
}

struct ConstellationTests {
    @Test(arguments: [
        ("GP", Constellation.gps), ("GL", .glonass), ("GA", .galileo), ("GB", .beidou), ("BD", .beidou),
        ("GQ", .qzss), ("QZ", .qzss), ("GI", .navic),
    ])
    func mapsTalkersToConstellations(_ talker: String, _ expected: Constellation) {
        #expect(Constellation(talker: talker) == expected)
    }

    @Test func leavesTheCombinedTalkerUnmapped() {
        #expect(Constellation(talker: "GN") == nil)
    }

    @Test func decodesGQAndGITalkersThatGPSDDrops() throws {
        let line = "$GQGSV,1,1,01,193,45,120,40*" + NMEAChecksum.hex(NMEAChecksum.compute("GQGSV,1,1,01,193,45,120,40".utf8))
        guard case let .gsv(sut) = try decode(line) else { Issue.record("not GSV"); return }
        #expect(Constellation(talker: sut.talker) == .qzss)
    }
}
