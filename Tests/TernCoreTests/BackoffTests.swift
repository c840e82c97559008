import Testing
import TernCore

@Suite struct BackoffTests {
    @Test func withoutJitterDoublesEachAttempt() {
        let sut = Backoff(base: .seconds(2), maximum: .seconds(100), jitter: 0)
        #expect((1...4).map { sut.delay(attempt: $0, unitRandom: 0.9) } == [.seconds(2), .seconds(4), .seconds(8), .seconds(16)])
    }

    @Test func jitterShortensTheDelayWithinItsFraction() {
        let sut = Backoff(base: .seconds(10), maximum: .seconds(100), jitter: 0.5)
        #expect(sut.delay(attempt: 1, unitRandom: 0) == .seconds(10))
        #expect(sut.delay(attempt: 1, unitRandom: 0.5) == .milliseconds(7500))
    }

    @Test func hugeAttemptCountsStayAtTheMaximum() {
        let sut = Backoff(base: .seconds(1), maximum: .seconds(300), jitter: 0)
        #expect(sut.delay(attempt: 10_000, unitRandom: 0) == .seconds(300))
    }

    @Test func splitMixIsDeterministicPerSeed() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42), c = SplitMix64(seed: 43)
        let first = a.next()
        #expect(first == b.next())
        #expect(first != c.next())
        #expect((0..<1000).allSatisfy { _ in (0..<1).contains(a.nextUnit()) })
    }
}
