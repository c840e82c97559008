import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// Frames a sentence body with its checksum and CRLF-free `$...*HH`.
func sentence(_ body: String) -> String {
    "$" + body + "*" + NMEAChecksum.hex(NMEAChecksum.compute(body.utf8))
}

struct NMEAEpochAssemblyTests {
    @Test func takesTheModeAndDOPsFromGSA() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353GSA, Corpus.bu353RMC])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.mode == .threeD)
        #expect(fix.pdop == 1.8 && fix.vdop == 1.5)
        #expect(fix.usedByConstellation == [.gps: 8])
    }

    @Test func reportsAnEpochWithGSAModeOneAsInvalid() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, sentence("GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99"), Corpus.bu353RMC])
        #expect(sut.flush() == nil)
    }

    @Test func treatsDOPsOf9999AsUnknown() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353RMC, sentence("GPGSA,A,2,17,28,06,,,,,,,,,,99.99,99.99,99.99")])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.pdop == nil && fix.hdop == nil)
    }

    @Test func derivesAccuracyFromGSTSigmas() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [
            Corpus.bu353GGA, Corpus.bu353RMC, sentence("GPGST,030719.000,1.0,3.0,2.0,10.0,3.0,4.0,6.0"),
        ])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.accuracy == 5.0)
        #expect(fix.errorEstimate == ErrorEstimate(latitude: 3, longitude: 4, altitude: 6))
    }

    @Test func advancesTheCarriedDateAtMidnight() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [
            sentence("GPRMC,235959.00,A,4404.14063,N,12118.85478,W,0.1,,311214,,,A"),
            sentence("GPGGA,000000.00,4404.14063,N,12118.85478,W,1,08,1.0,100.0,M,0.0,M,,"),
        ])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.time == Date(timeIntervalSince1970: 1_420_070_400))  // 2015-01-01T00:00:00Z
    }

    @Test func takesTheDateFromZDA() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [
            sentence("GPGGA,193221.00,2037.7279,N,08704.0848,W,1,04,1.7,-30.40,M,-13.9,M,,"),
            sentence("GPZDA,193221.00,23,12,2020,00,00"),
        ])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.time == Date(timeIntervalSince1970: 1_608_751_941))
    }

    @Test func countsSatellitesInViewPerConstellationFromGSV() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, Corpus.gsvGL, Corpus.bu353RMC])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.inViewByConstellation == [.glonass: 9])
        #expect(fix.satellitesInView == 9)
    }

    @Test func assemblesAGNSOnlyEpoch() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.neoRMC, Corpus.gnGNS])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.altitude == 1147.2)
        #expect(fix.mode == .threeD)
    }
}

struct GPSDFixRecordTests {
    @Test func writesGPSDsFixFormat() {
        var fix = Fix(
            time: Date(timeIntervalSince1970: 1_484_006_981), coordinate: Coordinate(latitude: 44.068897833, longitude: -121.314271333),
            altitude: 1144.8, speed: 0.015, quality: .gps)
        fix.mode = .threeD
        let sut = GPSDFixRecord(fix)
        #expect(sut.jsonLine == """
            {"time":"2017-01-10T00:09:41.000Z","lat":44.068897833,"lon":-121.314271333,"alt":1144.8,"speed":0.015,\
            "track":null,"mode":3,"quality":1}

            """)
    }
}

struct NMEALogDecoderTests {
    @Test func skipsCommentsAndTakesTheReferenceDateFromTheHeader() {
        var sut = NMEALogDecoder()
        var fixes: [Fix] = []
        let log = "# Date: 2019-03-14\n" + sentence("GPRMC,000231.42,A,4829.0005,N,00022.0016,E,0.16,212.28,220899,,,A") + "\n"
        sut.append(Array(log.utf8)) { fixes.append($0) }
        sut.finish { fixes.append($0) }
        #expect(fixes.map(\.time) == [Date(timeIntervalSince1970: 1_554_595_351.42)])  // 2019-04-07, rollover corrected
        #expect(sut.stats.comments == 1)
    }

    @Test func handlesACommentSplitAcrossReads() {
        var sut = NMEALogDecoder()
        var fixes: [Fix] = []
        sut.append(Array("# Da".utf8)) { fixes.append($0) }
        sut.append(Array(("te: 2014-12-31\n" + Corpus.bu353GGA + "\r\n" + Corpus.bu353RMC + "\r\n").utf8)) { fixes.append($0) }
        sut.finish { fixes.append($0) }
        #expect(fixes.count == 1)
        #expect(sut.stats.framer.garbageBytes == 0)
    }
}
