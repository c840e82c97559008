import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// An acquiring receiver's epochs: no position yet, but the satellites it hears (GSV SNRs).
struct NoFixEpochTests {
    /// One second of an acquiring MT3339: invalid RMC and GGA, a two-part GSV with three SNRs.
    private let acquiring = [
        sentence("GPRMC,030719.000,V,,,,,0.00,0.00,311214,,,N"),
        sentence("GPGGA,030719.000,,,,,0,00,,,M,,M,,"),
        sentence("GPGSV,2,1,05,17,45,120,38,28,30,250,,06,20,080,27,11,60,300,"),
        sentence("GPGSV,2,2,05,19,10,010,22"),
    ]

    @Test func anAcquiringEpochIsReportedWithTheSatellitesHeard() throws {
        var sut = NMEAFixAssembler(reportsNoFixEpochs: true)
        _ = try feed(&sut, acquiring)
        let flushed = sut.flush()
        let epoch = try #require(flushed)
        #expect(epoch.quality == .invalid)
        #expect(epoch.satellitesHeard == 3)
        #expect(epoch.satellitesInView == 5)
        #expect(sut.stats.noFixEpochsReported == 1 && sut.stats.fixesEmitted == 0)
    }

    @Test func anAcquiringEpochIsDroppedByDefaultAsGpsdDoes() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, acquiring)
        #expect(sut.flush() == nil)
        #expect(sut.stats.invalidEpochs == 1)
    }

    @Test func aValidFixCarriesTheSatellitesHeard() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353RMC] + acquiring.suffix(2))
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.satellitesHeard == 3)
    }
}

struct NoFixSentenceWriterTests {
    @Test func acquiringSentencesDecodeToANoFixEpochWithTheSatellitesHeard() throws {
        let sut = NMEAWriter()
        var assembler = NMEAFixAssembler(reportsNoFixEpochs: true)
        let time = Date(timeIntervalSince1970: 1_795_219_200)
        _ = try feed(&assembler, sut.noFixSentences(at: time, heard: 6))
        let flushed = assembler.flush()
        let epoch = try #require(flushed)
        #expect(epoch.quality == .invalid && epoch.satellitesHeard == 6)
    }
}
