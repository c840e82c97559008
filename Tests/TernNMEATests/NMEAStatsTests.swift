import Testing
import TernNMEA

/// The counters add and subtract field by field, every field (the receiver sums what each read added).
@Suite struct NMEAStatsTests {
    private static func framer(_ base: Int) -> NMEAFramerStats {
        var s = NMEAFramerStats()
        s.sentences = base + 1
        s.checksumErrors = base + 2
        s.missingChecksum = base + 3
        s.overlong = base + 4
        s.garbageBytes = base + 5
        s.malformed = base + 6
        return s
    }

    private static func assembler(_ base: Int) -> NMEAFixAssemblerStats {
        var s = NMEAFixAssemblerStats()
        s.epochs = base + 1
        s.fixesEmitted = base + 2
        s.invalidEpochs = base + 3
        s.noFixEpochsReported = base + 4
        s.undatedEpochs = base + 5
        s.untrustedTimeFixes = base + 6
        s.orphanSentences = base + 7
        s.completedAtCycleEnd = base + 8
        s.completedWhenQuiet = base + 9
        s.discardedEpochs = base + 10
        s.lateSentences = base + 11
        s.lateAfterQuiet = base + 12
        s.trailingSentences = base + 13
        s.amendedEpochs = base + 14
        return s
    }

    /// Whether every stored counter of `value` is set (so that the fixtures cover each field).
    private static func everyFieldSet(_ value: Any) -> Bool {
        Mirror(reflecting: value).children.allSatisfy { ($0.value as? Int).map { $0 != 0 } ?? false }
    }

    @Test func theFramersCountersAddAndSubtractEveryField() {
        let a = Self.framer(10), b = Self.framer(100)
        #expect(Self.everyFieldSet(a))
        #expect((a + b) - b == a)
        #expect((a + b).sentences == 112)
    }

    @Test func theAssemblersCountersAddAndSubtractEveryField() {
        let a = Self.assembler(10), b = Self.assembler(100)
        #expect(Self.everyFieldSet(a))
        #expect((a + b) - b == a)
        #expect((a + b).amendedEpochs == 138)
    }
}
