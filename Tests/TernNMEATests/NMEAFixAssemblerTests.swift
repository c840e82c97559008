import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// Decodes corpus lines and feeds them to `sut`, returning every fix it emitted.
func feed(_ sut: inout NMEAFixAssembler, _ lines: [String]) throws -> [Fix] {
    try lines.flatMap { sut.add(try decode($0)) }
}

struct NMEAFixAssemblerTests {
    @Test func emitsNothingUntilTheNextEpochStarts() throws {
        var sut = NMEAFixAssembler()
        #expect(try feed(&sut, [Corpus.bu353GGA, Corpus.bu353GSA, Corpus.bu353RMC]).isEmpty)
    }

    @Test func emitsOneFixWhenASentenceWithANewTimeArrives() throws {
        var sut = NMEAFixAssembler()
        let fixes = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353RMC, Corpus.bu353GGANext])
        #expect(fixes.count == 1)
    }

    @Test func flushEmitsThePendingEpoch() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353RMC])
        #expect(sut.flush() != nil)
    }

    @Test func combinesGGAAndRMCOfTheSameTime() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353RMC])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fix.time == Date(timeIntervalSince1970: 1_419_995_239))  // 2014-12-31T03:07:19Z
        #expect(fix.altitude == 59.9)
        #expect(fix.satellites == 8)
        #expect(fix.quality == .gps)
        #expect(fix.course == 181.39)
        #expect(abs((fix.speed ?? 0) - 0.355) < 0.001)
    }

    @Test func groupsRegardlessOfSentenceOrder() throws {
        var sut = NMEAFixAssembler()
        let fixes = try feed(&sut, [Corpus.neoRMC, Corpus.neoGGA, Corpus.neoRMCNext, Corpus.neoGGANext])
        #expect(fixes.count == 1)
        #expect(fixes.first?.altitude == 1147.2)
        #expect(fixes.first?.hdop == 0.91)
    }

    @Test func derivesAccuracyFromHDOPTimesTheDefaultUERE() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.neoRMC, Corpus.neoGGA])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(abs((fix.accuracy ?? 0) - 0.91 * NMEAFixAssembler.defaultUERE) < 1e-9)
    }

    @Test func derivesAccuracyFromAConfiguredUERE() throws {
        var sut = NMEAFixAssembler(uere: 10)
        _ = try feed(&sut, [Corpus.neoRMC, Corpus.neoGGA])
        #expect(abs((sut.flush()?.accuracy ?? 0) - 9.1) < 1e-9)
    }

    @Test func needsADateToEmit() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA])
        #expect(sut.flush() == nil)
        #expect(sut.stats.undatedEpochs == 1)
    }

    @Test func reusesTheLastRMCDateForAGGAOnlyEpoch() throws {
        var sut = NMEAFixAssembler()
        let fixes = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353RMC, Corpus.bu353GGANext])
        let flushed = sut.flush()
        let fix = try #require(flushed)
        #expect(fixes.count == 1)
        #expect(fix.time == Date(timeIntervalSince1970: 1_419_995_240))
    }

    @Test func marksAFixUntrustedWhenASynchronisedClockContradictsItsDate() throws {
        // bu353 recorded on 2014-12-31, replayed on 2026-11-25 with a synchronised clock.
        let clock = NMEADecoder(context: NMEADecodingContext(reference: {
            .clock(Date(timeIntervalSince1970: 1_795_564_800), synchronised: true)
        }))
        var sut = NMEAFixAssembler()
        var fixes: [Fix] = []
        for line in [Corpus.bu353GGA, Corpus.bu353RMC, Corpus.bu353GGANext] {
            var framer = NMEAFramer()
            let sentence = try #require(framer.append(line.line).first)
            fixes += sut.add(try clock.decode(sentence))
        }
        fixes += [sut.flush()].compactMap { $0 }
        #expect(fixes.map(\.time) == [Date(timeIntervalSince1970: 1_419_995_239), Date(timeIntervalSince1970: 1_419_995_240)])
        #expect(fixes.allSatisfy { $0.timeUntrusted })
        #expect(sut.stats.untrustedTimeFixes == 2)
    }

    @Test func trustsADateTheClockAgreesWith() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GGA, Corpus.bu353RMC])
        #expect(sut.flush()?.timeUntrusted == false)
        #expect(sut.stats.untrustedTimeFixes == 0)
    }

    @Test func emitsNoFixForAVoidRMCAndCountsTheEpochInvalid() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.acquiringRMC])
        #expect(sut.flush() == nil)
        #expect(sut.stats.invalidEpochs == 1)
    }

    @Test func emitsNoFixForGGAQualityZeroEvenWithAValidRMC() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353RMC, Corpus.bu353GGA.replacingOccurrences(of: ",E,1,08,", with: ",E,0,08,")
            .replacingOccurrences(of: "*7D", with: "*7C")])
        #expect(sut.flush() == nil)
        #expect(sut.stats.invalidEpochs == 1)
    }

    @Test func ignoresUnsupportedSentences() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.bu353GSA, Corpus.garminPGRME])
        #expect(sut.flush() == nil)
        #expect(sut.stats.epochs == 0)
    }

    @Test func countsEpochsAndEmittedFixes() throws {
        var sut = NMEAFixAssembler()
        _ = try feed(&sut, [Corpus.acquiringRMC, Corpus.bu353GGA, Corpus.bu353RMC, Corpus.bu353GGANext, Corpus.bu353RMCNext])
        _ = sut.flush()
        #expect(sut.stats.epochs == 3)
        #expect(sut.stats.fixesEmitted == 2)
    }
}
