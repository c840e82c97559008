import Testing
import TernCore
import TernTesting

@Suite struct FixSchedulerSummaryTests {
    private let adaptive = FixPolicy.adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900))

    /// No warm-up: each cycle's first fix is taken (the summary's figures alone).
    private func makeSUT(_ policy: FixPolicy) -> FixScheduler {
        var options = FixScheduler.Options(policy: policy, acquisitionTimeout: .seconds(30))
        options.warmUp = WarmUpRule(period: .zero)
        return FixScheduler(options: options)
    }

    /// Feeds a good still fix at `seconds` and its acceptance.
    private func fix(_ sut: inout FixScheduler, at seconds: Double) {
        let now = Duration.seconds(seconds)
        _ = sut.handle(.fixReceived(.fixture(seconds: seconds, accuracy: 4, speed: 0), now: now))
        _ = sut.handle(.delivered(accepted: true, now: now))
    }

    @Test func beforeAnyFixTheMotionIsUnknown() {
        var sut = makeSUT(adaptive)
        _ = sut.handle(.start(now: .zero))
        let summary = sut.summary(now: .seconds(3))
        #expect(summary.policy == "adaptive 30 m")
        #expect(summary.phase == "acquiring")
        #expect(summary.motion == "unknown")
        #expect(summary.nextPowerOnSeconds == nil)
        #expect(summary.ephemerisAgeSeconds == nil)
    }

    @Test func aStillReceiverSaysHowLongAndWhenItWakes() {
        var sut = makeSUT(adaptive)
        _ = sut.handle(.start(now: .zero))
        fix(&sut, at: 35)  // cold start: decodes the ephemeris
        let wake = sut.state.offUntil ?? .zero
        _ = sut.handle(.timerFired(now: wake))
        fix(&sut, at: wake.seconds + 1.5)
        let now = wake.seconds + 4
        let summary = sut.summary(now: .seconds(now))
        #expect(summary.phase == "off")
        #expect(summary.motion == "still")
        #expect(summary.stillSeconds == now - 35)
        #expect(summary.nextPowerOnSeconds == ((sut.state.offUntil ?? .zero) - .seconds(now)).seconds)
        #expect(summary.intervalSeconds == sut.interval(now: .seconds(now)).seconds)
        #expect(summary.ephemerisAgeSeconds == now - 35)
        #expect(summary.offBudgetSeconds == 0)
        #expect((summary.offBudgetAllowedSeconds ?? 0) > 0)
    }

    @Test func noSkyAttemptsInARowAreCounted() {
        var sut = makeSUT(adaptive)
        _ = sut.handle(.start(now: .zero))
        fix(&sut, at: 35)
        var t = sut.state.offUntil ?? .zero
        for _ in 0..<3 {
            let deadline = sut.handle(.timerFired(now: t)).compactMap { if case let .wake(at) = $0 { at } else { nil } }.last ?? t
            _ = sut.handle(.timerFired(now: deadline))
            t = sut.state.offUntil ?? deadline
        }
        let summary = sut.summary(now: t)
        #expect(summary.consecutiveTimeouts == 3)
        #expect(summary.timeouts == 3)
    }

    @Test func theFixedPolicyHasNoAdaptiveFigures() {
        var sut = makeSUT(.fixed(interval: .seconds(60)))
        _ = sut.handle(.start(now: .zero))
        let summary = sut.summary(now: .seconds(1))
        #expect(summary.policy == "fixed 60s")
        #expect(summary.intervalSeconds == nil)
        #expect(summary.offBudgetSeconds == nil)
    }
}
