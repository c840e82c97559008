import Testing
import TernCore
import TernTesting

@Suite struct FixSchedulerTests {
    private func makeSUT(
        _ policy: FixPolicy = .adaptive(errorBudget: 30, minInterval: .seconds(1), maxInterval: .seconds(900)),
        timeout: Int = 30, warmUp: Duration = .zero
    ) -> FixScheduler {
        var options = FixScheduler.Options(policy: policy, acquisitionTimeout: .seconds(timeout), accuracyTarget: 15)
        // The interval rules alone: no warm-up wait unless asked, no plausibility recheck (their own tests cover them).
        options.warmUp = WarmUpRule(period: warmUp)
        options.plausibility = nil
        return FixScheduler(options: options)
    }

    /// Feeds one good fix at `seconds` and its acceptance; returns the actions after the verdict.
    @discardableResult
    private func fix(
        _ sut: inout FixScheduler, at seconds: Double, north: Double = 0, speed: Double = 0, accuracy: Double = 4
    ) -> [FixSchedulerAction] {
        let now = Duration.seconds(seconds)
        let fix = Fix.fixture(seconds: seconds, metresNorth: north, accuracy: accuracy, speed: speed)
        _ = sut.handle(.fixReceived(fix, now: now))
        return sut.handle(.delivered(accepted: true, now: now))
    }

    private func wakeTime(_ actions: [FixSchedulerAction]) -> Duration? {
        actions.compactMap { if case let .wake(at) = $0 { at } else { nil } }.last
    }

    /// Runs a still receiver through cycles; returns the off intervals chosen.
    private func stillCycles(_ sut: inout FixScheduler, count: Int) -> [Double] {
        var t = Duration.zero
        var intervals: [Double] = []
        for _ in 0..<count {
            let actions = fix(&sut, at: t.seconds + 1.5)
            guard let next = wakeTime(actions) else { break }
            intervals.append(next.seconds - (t.seconds + 1.5))
            t = next
            _ = sut.handle(.timerFired(now: t))
        }
        return intervals
    }

    @Test func fixedPolicySwitchesPowerExactlyOnSchedule() {
        var sut = makeSUT(.fixed(interval: .seconds(60)))
        #expect(sut.handle(.start(now: .zero)) == [.powerOn, .wake(at: .seconds(120))])
        #expect(fix(&sut, at: 35) == [.powerOff, .wake(at: .seconds(60))])
        #expect(sut.handle(.timerFired(now: .seconds(60))) == [.powerOn, .wake(at: .seconds(90))])
        #expect(fix(&sut, at: 61.5) == [.powerOff, .wake(at: .seconds(120))])
    }

    /// Runs `count` attempts without sky after a first fix; returns (on-time, wait after) per attempt.
    private func noSkyAttempts(_ sut: inout FixScheduler, count: Int) -> [(on: Duration, wait: Duration)] {
        _ = sut.handle(.start(now: .zero))
        var t = wakeTime(fix(&sut, at: 35)) ?? .zero  // cold start done: ephemeris fresh
        var attempts: [(on: Duration, wait: Duration)] = []
        for _ in 0..<count {
            let on = sut.handle(.timerFired(now: t))
            #expect(on.first == .powerOn)
            let deadline = wakeTime(on) ?? .zero
            let off = sut.handle(.timerFired(now: deadline))
            #expect(off.first == .powerOff)
            let next = wakeTime(off) ?? .zero
            attempts.append((deadline - t, next - deadline))
            t = next
        }
        return attempts
    }

    @Test func noSkyNeverKeepsTheReceiverOnPastTheTimeout() {
        var sut = makeSUT(timeout: 30)
        let attempts = noSkyAttempts(&sut, count: 6)
        #expect(sut.timeouts == 6)
        // A hot start gives up after 10 s; the attempt after the first miss allows a warm start (120 s).
        #expect(attempts.map(\.on) == [.seconds(10), .seconds(120), .seconds(10), .seconds(10), .seconds(10), .seconds(10)])
    }

    /// A no-fix epoch of an acquiring receiver that hears `heard` satellites.
    private func acquiring(_ sut: inout FixScheduler, at seconds: Double, heard: Int) -> [FixSchedulerAction] {
        var epoch = Fix.fixture(seconds: seconds, accuracy: nil, quality: .invalid)
        epoch.satellitesHeard = heard
        return sut.handle(.fixReceived(epoch, now: .seconds(seconds)))
    }

    @Test func satellitesHeardLetASlowStartTakeAWarmStartsTime() {
        var sut = makeSUT(timeout: 30)
        _ = sut.handle(.start(now: .zero))
        let wake = wakeTime(fix(&sut, at: 35)) ?? .zero  // ephemeris fresh: a hot start expected
        #expect(wakeTime(sut.handle(.timerFired(now: wake))) == wake + .seconds(10))
        #expect(acquiring(&sut, at: wake.seconds + 3, heard: 8) == [.wake(at: wake + .seconds(120))])
        #expect(sut.handle(.timerFired(now: wake + .seconds(10))).isEmpty)  // still acquiring
    }

    @Test func noSatellitesHeardMeansNoSkySoNoWarmLengthRetry() {
        var sut = makeSUT(timeout: 30)
        _ = sut.handle(.start(now: .zero))
        var t = wakeTime(fix(&sut, at: 35)) ?? .zero
        var onTimes: [Duration] = []
        for _ in 0..<4 {
            let deadline = wakeTime(sut.handle(.timerFired(now: t))) ?? .zero
            #expect(acquiring(&sut, at: t.seconds + 3, heard: 0).isEmpty)
            onTimes.append(deadline - t)
            t = wakeTime(sut.handle(.timerFired(now: deadline))) ?? .zero
        }
        #expect(onTimes == [.seconds(10), .seconds(10), .seconds(10), .seconds(10)])
    }

    @Test func noSkyAttemptsGrowSparserUpToTheMaximumBackoff() {
        var sut = makeSUT(timeout: 30)
        let waits = noSkyAttempts(&sut, count: 150).map(\.wait)
        #expect(waits.first == .seconds(30))
        #expect(zip(waits, waits.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(waits.last == .seconds(900))
    }

    @Test func stationaryIntervalsGrowUpToTheMaximum() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        // The bad-time cap (5 % of elapsed + 300 s credit) lets the still interval reach 900 s after ~5 h.
        let intervals = stillCycles(&sut, count: 120)
        #expect(zip(intervals, intervals.dropFirst()).allSatisfy { $0 <= $1 + 1e-9 })
        #expect(intervals.last == 900)
    }

    @Test func movementResetsToShortIntervalsWithinOneCycle() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        let intervals = stillCycles(&sut, count: 100)
        let until = sut.state.offUntil ?? .zero
        let t = until.seconds
        _ = sut.handle(.timerFired(now: until))
        let next = wakeTime(fix(&sut, at: t + 1.5, north: 500, speed: 10))?.seconds ?? .infinity
        #expect((intervals.last ?? 0) > 300)
        #expect(next - (t + 1.5) < 30)
    }

    @Test func aWalkerWhoTurnedACornerKeepsShortLegsOnTheStraightAfter() {
        /// The interval after a walker's third fix: north, then (after a corner or not) east, east.
        func intervalAfterStraightLeg(turned: Bool) -> Double {
            // No bad-time cap: only the motion decides.
            var options = FixScheduler.Options(
                policy: .adaptive(errorBudget: 30, minInterval: .seconds(1), maxInterval: .seconds(900)), tuning: tuned { $0.badTimeShare = 0 })
            options.warmUp = WarmUpRule(period: .zero)  // the motion rules alone
            options.plausibility = nil
            var sut = FixScheduler(options: options)
            _ = sut.handle(.start(now: .zero))
            var position = (north: 0.0, east: 0.0)
            var t = 35.0, actions: [FixSchedulerAction] = []
            let courses: [Double] = turned ? [0, 90, 90] : [0, 0, 0]
            for (index, course) in courses.enumerated() {
                if index > 0 {
                    let wake = sut.state.offUntil ?? .zero
                    _ = sut.handle(.timerFired(now: wake))
                    let leg = 1.4 * (wake.seconds + 1.5 - t)
                    t = wake.seconds + 1.5
                    if course == 0 { position.north += leg } else { position.east += leg }
                }
                let fix = Fix.fixture(seconds: t, metresNorth: position.north, metresEast: position.east, speed: 1.4, course: course)
                _ = sut.handle(.fixReceived(fix, now: .seconds(t)))
                actions = sut.handle(.delivered(accepted: true, now: .seconds(t)))
            }
            return (wakeTime(actions)?.seconds ?? 0) - t
        }
        // The corner is remembered: 2 · 30 m · 0.7 / (sin 45° · 1.4 m/s) ≈ 42 s, faded a little.
        #expect(intervalAfterStraightLeg(turned: true) < 50)
        #expect(intervalAfterStraightLeg(turned: false) > 100)
    }

    @Test func aStopWaitsAboutTwentyBudgetsOfTheUsualTravelTime() {
        /// The interval after the thing, having moved at `speed`, is seen still.
        func stillIntervalAfterMoving(at speed: Double) -> Double {
            var options = FixScheduler.Options(
                policy: .adaptive(errorBudget: 30, minInterval: .seconds(1), maxInterval: .seconds(900)), tuning: tuned { $0.badTimeShare = 0 })
            options.warmUp = WarmUpRule(period: .zero)  // the motion rules alone
            options.plausibility = nil
            var sut = FixScheduler(options: options)
            _ = sut.handle(.start(now: .zero))
            _ = fix(&sut, at: 35, speed: speed)
            var wake = sut.state.offUntil ?? .zero
            _ = sut.handle(.timerFired(now: wake))
            let stop = speed * (wake.seconds - 33.5)
            _ = fix(&sut, at: wake.seconds + 1.5, north: stop, speed: speed)
            wake = sut.state.offUntil ?? .zero
            _ = sut.handle(.timerFired(now: wake))
            let at = wake.seconds + 1.5
            return (wakeTime(fix(&sut, at: at, north: stop, speed: 0))?.seconds ?? 0) - at
        }
        // 20 × 30 m at 15 m/s is 40 s; at 1.4 m/s, 429 s.
        #expect(abs(stillIntervalAfterMoving(at: 15) - 40) < 1)
        #expect(abs(stillIntervalAfterMoving(at: 1.4) - 428.6) < 1)
    }

    @Test func aSlowHotStartIsNotTakenForAnEphemerisDecode() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        _ = fix(&sut, at: 35)  // cold start: the receiver decoded the ephemeris
        let wake = sut.state.offUntil ?? .zero
        _ = sut.handle(.timerFired(now: wake))
        _ = fix(&sut, at: wake.seconds + 12)  // a slow hot start, well short of a warm start's 33 s
        #expect(sut.ephemerisTime == .seconds(35))
    }

    @Test func breakEvenKeepsTheReceiverOnWhenTheNextFixIsDueSooner() {
        // The next fix is due within 2 s; a power cycle costs ≈ 2.6 s of tracking.
        var sut = makeSUT(.adaptive(errorBudget: 30, minInterval: .seconds(1), maxInterval: .seconds(2)))
        _ = sut.handle(.start(now: .zero))
        let actions = fix(&sut, at: 35, speed: 20)
        #expect(!actions.contains(.powerOff))
        #expect(sut.isPowered)
        #expect(sut.keptOn == 1)
        #expect(sut.breakEven > .seconds(2) && sut.breakEven < .seconds(3))
    }

    @Test func cyclesWhenTheNextFixIsDueLaterThanBreakEven() {
        var sut = makeSUT(.adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(5)))
        _ = sut.handle(.start(now: .zero))
        #expect(fix(&sut, at: 35, speed: 20).first == .powerOff)
    }

    @Test func goodEnoughRuleSkipsNoisyFirstFixes() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        let noisy = Fix.fixture(seconds: 2, accuracy: 40)
        // Not delivered: kept as the fallback, taken at the latest after the settle time (5 s).
        #expect(sut.handle(.fixReceived(noisy, now: .seconds(2))) == [.wake(at: .seconds(7))])
        let good = Fix.fixture(seconds: 3, accuracy: 6)
        #expect(sut.handle(.fixReceived(good, now: .seconds(3))) == [.deliver(good)])
    }

    @Test func goodEnoughRuleTakesTheBestFixAtTheTimeout() {
        var sut = makeSUT(timeout: 30)
        _ = sut.handle(.start(now: .zero))
        let worse = Fix.fixture(seconds: 10, accuracy: 40)
        let better = Fix.fixture(seconds: 11, accuracy: 25)
        _ = sut.handle(.fixReceived(worse, now: .seconds(10)))
        _ = sut.handle(.fixReceived(better, now: .seconds(11)))
        // Cold start: the deadline is the stale-ephemeris timeout.
        let deadline = Duration.seconds(120)
        #expect(sut.handle(.timerFired(now: deadline)) == [.deliver(better)])
        #expect(sut.handle(.delivered(accepted: true, now: deadline)).first == .powerOff)
    }

    @Test func ephemerisRefreshIsScheduledBeforeTheHotWindowExpires() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        var t = Duration.zero
        var refreshStartedAt: Double?
        fix(&sut, at: 35)  // cold start
        _ = sut.handle(.timerFired(now: sut.state.offUntil ?? .zero))
        t = sut.state.offUntil ?? .zero
        while t < .seconds(3 * 3600), refreshStartedAt == nil {
            let actions = fix(&sut, at: t.seconds + 1.5)
            if sut.ephemerisRefreshes > 0 { refreshStartedAt = t.seconds + 1.5; break }
            guard let next = wakeTime(actions) else { break }
            t = next
            _ = sut.handle(.timerFired(now: t))
        }
        // The hot window runs from the cold start's decode (fix at 35 s); the refresh cycle is brought
        // forward to 30 s (`refreshMargin`) before its end rather than taken a whole interval early.
        let started = refreshStartedAt ?? .infinity
        #expect(started >= 35 + 7200 - 30 && started <= 35 + 7200 + 1.5)
        guard case let .tracking(tracking) = sut.state else { Issue.record("not tracking"); return }
        #expect(tracking.until.seconds - started == 30)
    }

    @Test func ephemerisRefreshWaitsUntilJustBeforeTheHotWindowEnds() {
        // A parked receiver on 900 s intervals: fixes 35 + 901.5·k s; the one after 6345.5 s would land
        // past the window (7235 s), so that cycle comes forward to 30 s before the end and refreshes,
        // instead of refreshing at 6345.5 s and throwing away 15 minutes of ephemeris.
        var options = FixScheduler.Options(
            policy: .adaptive(errorBudget: 30, minInterval: .seconds(1), maxInterval: .seconds(900)),
            acquisitionTimeout: .seconds(30), tuning: tuned { $0.stillMinimum = .seconds(900); $0.badTimeShare = 0 })
        options.warmUp = WarmUpRule(period: .zero)  // every fix taken as it comes: the refresh's timing alone
        var sut = FixScheduler(options: options)
        _ = sut.handle(.start(now: .zero))
        var at = 35.0
        var wakes: [Double] = []
        while sut.ephemerisRefreshes == 0, at < 8000, wakes.count < 100 {
            let next = wakeTime(fix(&sut, at: at)) ?? .zero
            wakes.append(next.seconds)
            _ = sut.handle(.timerFired(now: next))
            at = next.seconds + 1.5
        }
        #expect(wakes.suffix(3) == [6344, 7205, 7206.5 + 30 + 30])  // the fix at 6345.5 s, the refresh, its guard
        #expect(sut.ephemerisRefreshes == 1)
    }

    @Test func losingTheSkyWhileMovingChargesTheIntervalToTheBadTimeAccount() {
        var sut = makeSUT(timeout: 30)
        _ = sut.handle(.start(now: .zero))
        fix(&sut, at: 35)
        let wake = sut.state.offUntil ?? .zero
        _ = sut.handle(.timerFired(now: wake))
        fix(&sut, at: wake.seconds + 1.5, north: 100, speed: 10)  // moving at 10 m/s
        let last = wake.seconds + 1.5
        let before = sut.badTime
        let attempt = sut.state.offUntil ?? .zero
        let deadline = wakeTime(sut.handle(.timerFired(now: attempt))) ?? .zero
        _ = sut.handle(.timerFired(now: deadline))  // no sky
        // The track drifts off once the thing is a budget (30 m, 3 s at 10 m/s) past the last fix.
        #expect(abs(sut.badTime - before - (attempt.seconds - last - 3)) < 1e-9)
    }

    @Test func timeWithoutSkyEarnsNoLongerIntervals() {
        var sut = makeSUT(timeout: 30)
        let attempts = noSkyAttempts(&sut, count: 70)  // a still receiver in a drawer for an hour or more
        let back = sut.state.offUntil ?? .zero
        #expect(back > .seconds(3600) && back < .seconds(7000))  // within the hot window: no refresh due
        #expect(attempts.count == 70)
        _ = sut.handle(.timerFired(now: back))
        let next = wakeTime(fix(&sut, at: back.seconds + 1.5)) ?? .zero
        // Only the first ~50 s had sky: the interval is as cautious as just after boot, not the
        // ≈ 5 % of the hour or more (≥ 190 s) that counting the drawer as good time would allow.
        #expect(next.seconds - (back.seconds + 1.5) < 30)
        // Without sky: from the first failed attempt (within half a minute of the fix at 35 s) to now.
        #expect(sut.skylessTime > back.seconds + 1.5 - 65 && sut.skylessTime < back.seconds + 1.5 - 35)
    }

    @Test func staleEphemerisGetsTheLongerAcquisitionTimeout() {
        var sut = makeSUT(timeout: 20)
        #expect(sut.handle(.start(now: .zero)) == [.powerOn, .wake(at: .seconds(120))])
    }

    @Test func alwaysOnDeliversEveryUsableFix() {
        var sut = makeSUT(.alwaysOn)
        #expect(sut.handle(.start(now: .zero)) == [.powerOn])
        let fix = Fix.fixture(seconds: 1)
        #expect(sut.handle(.fixReceived(fix, now: .seconds(1))) == [.deliver(fix)])
        #expect(sut.handle(.stop) == [.powerOff])
    }
    @Test func pastTheWarmUpTheBestFixIsTakenAfterTheSettleTimeNotTheTimeout() {
        var sut = makeSUT(timeout: 30)
        _ = sut.handle(.start(now: .zero))
        // Worse than the accuracy target: the estimate follows the satellite geometry, which changes
        // over minutes, so waiting out the acquisition timeout would only cost energy.
        let fair = Fix.fixture(seconds: 10, accuracy: 25)
        #expect(sut.handle(.fixReceived(fair, now: .seconds(10))) == [.wake(at: .seconds(15))])
        #expect(sut.handle(.timerFired(now: .seconds(15))) == [.deliver(fair)])
    }

    /// A stop's first fix taken past the warm-up, then the next cycle's first fix `north` metres from it.
    private func nextStillCycle(north: Double) -> (fix: Fix, actions: [FixSchedulerAction]) {
        var sut = makeSUT(timeout: 30, warmUp: .seconds(3))
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.fixReceived(.fixture(seconds: 1, speed: 0.1), now: .seconds(1)))
        _ = sut.handle(.fixReceived(.fixture(seconds: 4, speed: 0.1), now: .seconds(4)))
        let wake = wakeTime(sut.handle(.delivered(accepted: true, now: .seconds(4)))) ?? .zero
        _ = sut.handle(.timerFired(now: wake))
        let fix = Fix.fixture(seconds: wake.seconds + 1, metresNorth: north, speed: 0.1)
        return (fix, sut.handle(.fixReceived(fix, now: wake + .seconds(1))))
    }

    @Test func aStillFixThatConfirmsTheStopIsTakenAtOnceInTheWarmUp() {
        let (fix, actions) = nextStillCycle(north: 5)
        #expect(actions == [.deliver(fix)])
    }

    @Test func aStillFixDisplacedFromTheStopWaitsOutTheWarmUp() {
        let (_, actions) = nextStillCycle(north: 40)
        #expect(!actions.contains { if case .deliver = $0 { true } else { false } })
    }

    @Test func aStillFixThatStartsAStopWaitsOutTheWarmUp() {
        var sut = makeSUT(timeout: 30, warmUp: .seconds(3))
        _ = sut.handle(.start(now: .zero))
        let first = Fix.fixture(seconds: 1, speed: 0.1)
        // Nothing still before it: its error would stand for the whole stop, so it is only the fallback.
        #expect(sut.handle(.fixReceived(first, now: .seconds(1))) == [.wake(at: .seconds(6))])
        let settled = Fix.fixture(seconds: 4, speed: 0.1)
        #expect(sut.handle(.fixReceived(settled, now: .seconds(4))) == [.deliver(settled)])
    }

    @Test func aBendPastTheInterpolationsShareOfTheBudgetChargesTheBadTimeAccount() throws {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        fix(&sut, at: 35, speed: 10)
        let wake = try #require(sut.state.offUntil)
        _ = sut.handle(.timerFired(now: wake))
        let gap = wake.seconds + 1.5 - 35
        // 10 → 20 m/s over the gap, the chord as long as the mean speed says: a = 10 / gap, and the
        // chord's bend a·gap²/8 = 1.25 · gap, between the 21 m share (0.7 × 30 m) and the whole budget.
        fix(&sut, at: 35 + gap, north: 15 * gap, speed: 20)
        let bend = 1.25 * gap
        try #require(bend > 21 && bend < 30)
        #expect(abs(sut.badTime - gap * (1 - 21 / bend).squareRoot()) < 1e-6)
    }

    @Test func aStillThingFoundFarFromItsLastFixChargesTheBadTimeAccount() {
        var sut = makeSUT()
        _ = sut.handle(.start(now: .zero))
        fix(&sut, at: 2)
        _ = sut.handle(.timerFired(now: .seconds(600)))
        fix(&sut, at: 602)
        #expect(sut.badTime == 0)
        _ = sut.handle(.timerFired(now: .seconds(1200)))
        // Still at both ends, 120 m apart: beyond the 30 m budget for (1 − 30/120)² of the 600 s gap.
        fix(&sut, at: 1202, north: 120)
        #expect(abs(sut.badTime - 600 * 0.75 * 0.75) < 1)
    }
}

extension FixSchedulerTests {
    @Test func aVerdictWithNoFixDeliveredIsAProgrammingErrorThatChangesNothing() {
        var sut = FixScheduler(options: .init(policy: .fixed(interval: .seconds(60))))
        _ = sut.handle(.start(now: .zero))
        let before = sut.state
        let actions = sut.handle(.delivered(accepted: true, now: .seconds(1)))
        guard case .invalidEvent? = actions.first, actions.count == 1 else {
            Issue.record("not reported as invalid: \(actions)")
            return
        }
        #expect(sut.state == before)
        #expect(sut.invalidEvents == 1)
    }

    @Test func aFixWhileOffIsAProgrammingErrorThatPowersNothing() {
        var sut = FixScheduler(options: .init(policy: .fixed(interval: .seconds(60)), acquisitionTimeout: .seconds(10)))
        _ = sut.handle(.start(now: .zero))
        _ = sut.handle(.timerFired(now: .seconds(120)))  // the attempt timed out: off until the next slot
        let off = sut.state
        let actions = sut.handle(.fixReceived(.fixture(seconds: 121), now: .seconds(121)))
        #expect(actions.allSatisfy { if case .invalidEvent = $0 { true } else { false } } && actions.count == 1)
        #expect(sut.state == off)
    }

    @Test func eventsAfterTheStopAreIgnoredNotErrors() {
        var sut = FixScheduler(options: .init(policy: .fixed(interval: .seconds(60))))
        _ = sut.handle(.start(now: .zero))
        #expect(sut.handle(.stop) == [.powerOff])
        #expect(sut.handle(.timerFired(now: .seconds(60))) == [])
        #expect(sut.handle(.fixReceived(.fixture(seconds: 61), now: .seconds(61))) == [])
        #expect(sut.invalidEvents == 0)
    }
}

/// The shipped tuning with `change` made.
func tuned(_ change: (inout FixScheduler.Tuning) -> Void) -> FixScheduler.Tuning {
    var tuning = FixScheduler.Tuning.shipped
    change(&tuning)
    return tuning
}
