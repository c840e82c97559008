import Testing
import TernCore
import TernSimulation

@Suite struct ReceiverModelTests {
    @Test func startKindFollowsEphemerisAgeAndBackupPower() {
        let sut = ReceiverModel.mt3339
        #expect(sut.startKind(ephemerisAge: 3600) == .hot)
        #expect(sut.startKind(ephemerisAge: 3 * 3600) == .warm)
        #expect(sut.startKind(ephemerisAge: nil) == .cold)
        #expect(sut.startKind(ephemerisAge: 60, backupPower: false) == .cold)
    }

    @Test func hotTTFFHasTheDocumentedMedianAndP95() {
        let sut = ReceiverModel.ubloxM8
        var random = SplitMix64(seed: 3)
        let draws = (0..<4000).map { _ in sut.ttff(.hot, using: &random) }.sorted()
        #expect(abs(draws[2000] - 1.5) < 0.1)
        #expect(abs(draws[3800] - 4) < 0.4)
    }

    @Test func warmAndColdStartsTakeTensOfSeconds() {
        let sut = ReceiverModel.mt3339
        var random = SplitMix64(seed: 1)
        #expect((29...37).contains(sut.ttff(.warm, using: &random)))
        #expect((31...39).contains(sut.ttff(.cold, using: &random)))
    }
}
