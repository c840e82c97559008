import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct PlausibilityCheckTests {
    private let sut = PlausibilityCheck()

    private func motion(after fixes: [(Fix, Double)]) -> MotionEstimate {
        var motion = MotionEstimate()
        for (fix, at) in fixes { motion.update(with: fix, at: .seconds(at)) }
        return motion
    }

    /// A scheduler with the still recheck at 60 s and no warm-up (the check alone: fixes two seconds
    /// into a session count), a still fix at 2 s delivered and the receiver woken for the next one:
    /// the scheduler and when it woke.
    private func woken(tuning: (inout FixScheduler.Tuning) -> Void = { _ in }) -> (FixScheduler, Duration)? {
        var options = FixScheduler.Options(policy: .adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900)))
        options.plausibility = PlausibilityCheck(stillRecheck: .seconds(60))
        options.warmUp = WarmUpRule(period: .zero)
        tuning(&options.tuning)
        var scheduler = FixScheduler(options: options)
        _ = scheduler.handle(.start(now: .zero))
        _ = scheduler.handle(.fixReceived(.fixture(seconds: 2), now: .seconds(2)))
        let first = scheduler.handle(.delivered(accepted: true, now: .seconds(2)))
        guard case let .wake(at)? = first.last else { Issue.record("expected a wake-up, got \(first)"); return nil }
        _ = scheduler.handle(.timerFired(now: at))
        return (scheduler, at)
    }

    @Test func aStillThingThatJumpsHundredsOfMetresIsSuspect() {
        let still = motion(after: [(.fixture(seconds: 0), 0)])
        #expect(sut.suspicion(of: .fixture(seconds: 900, metresNorth: 400), at: .seconds(900), motion: still) != nil)
        #expect(sut.suspicion(of: .fixture(seconds: 900, metresNorth: 15), at: .seconds(900), motion: still) == nil)
    }

    @Test func aMovingThingWhereItsSpeedCarriedItIsNotSuspect() {
        let moving = motion(after: [(.fixture(seconds: 0, speed: 10), 0), (.fixture(seconds: 30, metresNorth: 300, speed: 10), 30)])
        #expect(sut.suspicion(of: .fixture(seconds: 60, metresNorth: 600, speed: 10), at: .seconds(60), motion: moving) == nil)
        #expect(sut.suspicion(of: .fixture(seconds: 60, metresNorth: 600, metresEast: 500, speed: 10), at: .seconds(60), motion: moving) != nil)
    }

    @Test func theNextEpochConfirmsARealMoveButNotAnOutlier() {
        let suspect = Fix.fixture(seconds: 900, metresNorth: 400)
        #expect(sut.agree(suspect, .fixture(seconds: 901, metresNorth: 402)))
        #expect(!sut.agree(suspect, .fixture(seconds: 901, metresNorth: 3)))
    }

    @Test func theAdaptiveSchedulerWaitsForTheNextEpochToConfirmAnOffCourseFix() {
        var options = FixScheduler.Options(policy: .adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900)))
        options.warmUp = WarmUpRule(period: .zero)  // the check alone: fixes two seconds into a session count
        var scheduler = FixScheduler(options: options)
        _ = scheduler.handle(.start(now: .zero))
        _ = scheduler.handle(.fixReceived(.fixture(seconds: 2, speed: 10), now: .seconds(2)))
        let first = scheduler.handle(.delivered(accepted: true, now: .seconds(2)))
        guard case let .wake(at)? = first.last else { Issue.record("expected a wake-up, got \(first)"); return }
        _ = scheduler.handle(.timerFired(now: at))
        let t = at.seconds
        // Driving north at 10 m/s: 600 m to the side of where that carried it is an outlier until confirmed.
        let outlier = Fix.fixture(seconds: t + 2, metresNorth: 10 * t, metresEast: 600, speed: 10)
        #expect(scheduler.handle(.fixReceived(outlier, now: at + .seconds(2))).isEmpty)
        let next = Fix.fixture(seconds: t + 3, metresNorth: 10 * (t + 1), speed: 10)
        #expect(scheduler.handle(.fixReceived(next, now: at + .seconds(3))) == [.deliver(next)])
    }

    @Test func aStillThingDisplacedWhileStillAndAMovingOneOffCourseAreToldApart() {
        let still = motion(after: [(.fixture(seconds: 0), 0)])
        #expect(sut.suspicion(of: .fixture(seconds: 900, metresNorth: 400), at: .seconds(900), motion: still) == .movedWhileStill)
        let moving = motion(after: [(.fixture(seconds: 0, speed: 10), 0), (.fixture(seconds: 30, metresNorth: 300, speed: 10), 30)])
        let offCourse = Fix.fixture(seconds: 60, metresNorth: 600, metresEast: 500, speed: 10)
        #expect(sut.suspicion(of: offCourse, at: .seconds(60), motion: moving) == .offCourse)
    }

    @Test func aDisplacedStillFixIsRetakenAfterTheRecheckDelayAndTheRetakeIsDelivered() {
        guard case (var scheduler, let at)? = woken() else { return }
        let t = at.seconds
        // Still, yet 200 m away: a lasting error (the next epoch would repeat it) or a move.
        let displaced = Fix.fixture(seconds: t + 2, metresNorth: 200)
        let now = at + .seconds(2)
        let recheck = scheduler.handle(.fixReceived(displaced, now: now))
        // Off until the error has had time to change: the recheck delay, or sooner if the next fix was due sooner.
        guard recheck.first == .powerOff, case let .wake(again)? = recheck.last else {
            Issue.record("expected the receiver off until a retake, got \(recheck)"); return
        }
        #expect(again > now && again <= now + .seconds(60))
        _ = scheduler.handle(.timerFired(now: again))
        // The retake says the same: it is taken (a real move), not questioned again.
        let retake = Fix.fixture(seconds: t + 2 + (again - now).seconds + 2, metresNorth: 201)
        #expect(scheduler.handle(.fixReceived(retake, now: again + .seconds(2))) == [.deliver(retake)])
    }

    @Test func aDepartureShownByARecheckedFixIsChargedFromWhenThatFixSaysItSetOff() {
        // The still interval (2 min) not capped by a young account.
        guard case (var scheduler, let at)? = woken(tuning: { $0.badTimeCredit = .seconds(3600) }) else { return }
        // Still by its speed, yet 60 m away: held back for a recheck.
        let seen = at + .seconds(2)
        let recheck = scheduler.handle(.fixReceived(.fixture(seconds: seen.seconds, metresNorth: 60), now: seen))
        guard case let .wake(again)? = recheck.last else { Issue.record("expected a retake, got \(recheck)"); return }
        _ = scheduler.handle(.timerFired(now: again))
        // The retake: walking on at 2 m/s, so it set off 60 m / 2 m/s = 30 s before the held-back fix.
        let now = again + .seconds(2)
        let retake = Fix.fixture(seconds: now.seconds, metresNorth: 60 + 2 * (now - seen).seconds, speed: 2)
        #expect(scheduler.handle(.fixReceived(retake, now: now)) == [.deliver(retake)])
        _ = scheduler.handle(.delivered(accepted: true, now: now))
        // The chord from the still fix is off by the most at the set-off, less towards either end.
        let since = 2.0, gap = now.seconds - since, setOff = seen.seconds - 30
        let peak = 2 * (now.seconds - setOff) * (setOff - since) / gap
        #expect(peak > 30, "the case needs a chord off by more than the budget")
        #expect(abs(scheduler.badTime - gap * (1 - 30 / peak)) < 1e-6)
        // Without the date the departure could be anywhere in the gap: all but 2 budgets' walk is charged.
        #expect(scheduler.badTime < gap - 2 * 30 / 2)
    }
}
