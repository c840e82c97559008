import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// Completing an epoch the moment its cycle ends: the learnt last sentence, a quiet line, late and
/// straggling sentences, and epochs thrown away at power changes.
struct NMEACycleEndTests {
    /// One sentence of second `second` after 12:00:00 on 2026-11-24 (a fix at 45.8° N, 15.9° E).
    private static func line(_ type: String, _ second: Int) -> String {
        let time = "1200\(second < 10 ? "0" : "")\(second).00"
        switch type {
        case "GGA": return sentence("GPGGA,\(time),4548.00000,N,01554.00000,E,1,08,0.9,120.0,M,45.0,M,,")
        case "RMC": return sentence("GPRMC,\(time),A,4548.00000,N,01554.00000,E,1.0,90.0,241126,,,A")
        case "GLL": return sentence("GPGLL,4548.00000,N,01554.00000,E,\(time),A,A")
        case "GSA2D": return sentence("GPGSA,A,2,01,02,03,,,,,,,,,,1.5,0.9,1.2")
        case "GSV1": return sentence("GPGSV,2,1,05,01,45,120,38,02,30,250,35,03,20,080,27,04,60,300,30")
        case "GSV2": return sentence("GPGSV,2,2,05,05,10,010,22")
        default: fatalError("no such test sentence \(type)")
        }
    }

    private static func cycle(_ second: Int, _ types: [String] = ["GGA", "RMC"]) -> [String] {
        types.map { line($0, second) }
    }

    private static func time(_ second: Int) -> Date {
        Date(timeIntervalSince1970: 1_795_521_600 + Double(second))  // 2026-11-24T12:00:00Z + second
    }

    /// Feeds lines one by one; returns, per line, the time of the last fix it completed (nil for none).
    private static func completions(_ sut: inout NMEAFixAssembler, _ lines: [String]) throws -> [Date?] {
        try lines.map { Array(sut.add(try decode($0, reference: time(0)))).last?.time }
    }

    @Test func aCycleIsCompletedAtTheNextTimeUntilItsLastSentenceIsLearnt() throws {
        var sut = NMEAFixAssembler()
        let done = try Self.completions(&sut, Self.cycle(0) + Self.cycle(1))
        #expect(done == [nil, nil, Self.time(0), nil])
    }

    @Test func aCycleIsCompletedByItsLastSentenceOnceItEndedThreeCyclesInARow() throws {
        var sut = NMEAFixAssembler()
        let done = try Self.completions(&sut, (0...3).flatMap { Self.cycle($0) })
        // Cycles 0–2 end at the next GGA; by cycle 3's GGA, RMC has ended three cycles: it completes cycle 3.
        #expect(done.compactMap { $0 } == [Self.time(0), Self.time(1), Self.time(2), Self.time(3)])
        #expect(done.last == Self.time(3))
        #expect(sut.stats.completedAtCycleEnd == 1)
    }

    @Test func aGSVGroupEndsACycleOnlyAtItsLastPart() throws {
        var sut = NMEAFixAssembler()
        let shape = ["GGA", "RMC", "GSV1", "GSV2"]
        let done = try Self.completions(&sut, (0...3).flatMap { Self.cycle($0, shape) })
        #expect(done.suffix(2) == [nil, Self.time(3)])
    }

    @Test func aCycleOfOneSentenceIsCompletedByItsOnlySentenceOnceLearnt() throws {
        var sut = NMEAFixAssembler()
        let fixes = try (0...5).flatMap { Self.cycle($0, ["RMC"]) }.map { Array(sut.add(try decode($0, reference: Self.time(0)))) }
        // RMC 3 completes cycle 2 (a new time) and, now learnt as the end, its own cycle 3.
        #expect(fixes.map { $0.map(\.time) } == [[], [Self.time(0)], [Self.time(1)], [Self.time(2), Self.time(3)], [Self.time(4)], [Self.time(5)]])
        #expect(sut.flush() == nil)
    }

    @Test func theOpenEpochIsCompletedWhenTheLineGoesQuiet() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, Self.cycle(0))
        #expect(sut.lineQuiet()?.time == Self.time(0))
        #expect(sut.lineQuiet() == nil)
        #expect(sut.stats.completedWhenQuiet == 1)
    }

    @Test func aSentenceOfAnEpochCompletedByTheLearntEndIsDroppedAndTheEndForgotten() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, (0...3).flatMap { Self.cycle($0) })
        // Cycle 4 sends a GLL after RMC: RMC did not end it after all.
        let done = try Self.completions(&sut, Self.cycle(4, ["GGA", "RMC", "GLL"]) + Self.cycle(5))
        #expect(done == [nil, Self.time(4), nil, nil, nil])
        #expect(sut.stats.lateSentences == 1 && sut.stats.lateAfterQuiet == 0)
        #expect(sut.flush()?.time == Self.time(5))
    }

    @Test func aSentenceOfAnEpochCompletedByAQuietLineIsCountedAsLateAfterQuiet() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, [Self.line("GGA", 0)])
        _ = sut.lineQuiet()
        #expect(try Self.completions(&sut, [Self.line("RMC", 0)]) == [nil])
        #expect(sut.stats.lateAfterQuiet == 1)
    }

    @Test func timeLessSentencesAfterTheLearntEndAreStragglersOfThatCycle() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, (0...3).flatMap { Self.cycle($0) })
        _ = try Self.completions(&sut, Self.cycle(4, ["GGA", "RMC", "GSA2D"]))
        let fixes = try Self.cycle(5).flatMap { sut.add(try decode($0, reference: Self.time(0))) }
        #expect(sut.stats.trailingSentences == 1)
        // The 2D GSA was cycle 4's: cycle 5 (GGA with altitude, no GSA) is 3D, and RMC still ends it.
        #expect(fixes.map(\.time) == [Self.time(5)])
        #expect(fixes.first?.mode == .threeD)
    }

    @Test func timeLessSentencesAfterAQuietLineOpenTheNextEpoch() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, Self.cycle(0))
        _ = sut.lineQuiet()
        _ = try Self.completions(&sut, [Self.line("GSA2D", 1)] + Self.cycle(1))
        let next = sut.flush()
        #expect(next?.time == Self.time(1))
        #expect(next?.mode == .twoD)
    }

    @Test func aDiscardedEpochYieldsNoFixAndTheNextOneIsWhole() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, [Self.line("GGA", 0)])
        sut.discardOpenEpoch()
        let done = try Self.completions(&sut, Self.cycle(30) + Self.cycle(31))
        #expect(done.compactMap { $0 } == [Self.time(30)])
        #expect(sut.stats.discardedEpochs == 1)
    }

    @Test func aLearntEndMissingFromTwoCyclesIsForgotten() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, (0...3).flatMap { Self.cycle($0) })
        // Reconfigured: GGA and GLL from now on. Cycles end at the next time again, then GLL is learnt.
        let done = try Self.completions(&sut, (4...9).flatMap { Self.cycle($0, ["GGA", "GLL"]) })
        #expect(done.last == Self.time(9))
        #expect(sut.stats.completedAtCycleEnd == 2)
    }

    @Test func discardingWithRelearnForgetsTheLearntEnd() throws {
        var sut = NMEAFixAssembler()
        _ = try Self.completions(&sut, (0...3).flatMap { Self.cycle($0) })
        sut.discardOpenEpoch(relearn: true)
        let done = try Self.completions(&sut, Self.cycle(10))
        #expect(done == [nil, nil])
    }
}
