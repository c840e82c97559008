import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct StandardLocationFilterTests {
    private func makeSUT() -> StandardLocationFilter {
        StandardLocationFilter(options: .init(maxAccuracy: 25, maxSpeed: 50, jumpTolerance: 100))
    }

    @Test func acceptsAGoodFirstFix() {
        var sut = makeSUT()
        let fix = Fix.fixture()
        #expect(sut.evaluate(fix).decision == .accept(fix))
    }

    @Test func rejectsAFixWithoutAValidQuality() {
        var sut = makeSUT()
        #expect(sut.evaluate(.fixture(quality: .invalid)).decision == .reject(.noFix))
        #expect(sut.evaluate(.fixture(quality: .estimated)).decision == .reject(.noFix))
    }

    @Test func rejectsCoordinatesOutOfRange() {
        var sut = makeSUT()
        var fix = Fix.fixture()
        fix.coordinate.latitude = 91
        #expect(sut.evaluate(fix).decision == .reject(.invalidCoordinate))
    }

    @Test func rejectsPoorAccuracy() {
        var sut = makeSUT()
        #expect(sut.evaluate(.fixture(accuracy: 40)).decision == .reject(.poorAccuracy(metres: 40, limit: 25)))
    }

    @Test func rejectsTheSameTimeTwice() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 10))
        #expect(sut.evaluate(.fixture(seconds: 10, metresNorth: 3)).decision == .reject(.duplicate))
    }

    @Test func rejectsAnOlderFix() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 10))
        #expect(sut.evaluate(.fixture(seconds: 5)).decision == .reject(.outOfSequence))
    }

    @Test func rejectsAFixWhoseTimeIsUntrusted() {
        var sut = makeSUT()
        var fix = Fix.fixture(seconds: 10)
        fix.timeUntrusted = true
        #expect(sut.evaluate(fix).decision == .reject(.untrustedTime))
    }

    @Test func anUntrustedFixNeverBecomesTheReference() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 10))
        var future = Fix.fixture(seconds: 10 * 365 * 86_400)
        future.timeUntrusted = true
        _ = sut.evaluate(future)
        #expect(sut.evaluate(.fixture(seconds: 20)).decision == .accept(.fixture(seconds: 20)))
    }

    @Test func rejectsAnImpossibleJump() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        let decision = sut.evaluate(.fixture(seconds: 10, metresNorth: 5_000)).decision
        guard case let .reject(.implausibleJump(speed, limit)) = decision else {
            Issue.record("expected an implausible jump, got \(decision)")
            return
        }
        #expect(abs(speed - 500) < 5)
        #expect(limit == 50)
    }

    @Test func acceptsFastButPossibleMovement() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        let fix = Fix.fixture(seconds: 60, metresNorth: 2_000)
        #expect(sut.evaluate(fix).decision == .accept(fix))
    }

    @Test func aRejectedFixDoesNotBecomeTheReference() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        _ = sut.evaluate(.fixture(seconds: 10, metresNorth: 5_000))
        let fix = Fix.fixture(seconds: 20, metresNorth: 10)
        #expect(sut.evaluate(fix).decision == .accept(fix))
    }

    // MARK: Time sanity (injected clocks)

    private let origin = Date(timeIntervalSince1970: 1_795_219_200)

    @Test func aFixDatedInTheFutureIsRejectedAndDoesNotBlockTheFixesAfterIt() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0), context: FilterContext(now: .seconds(100)))
        // A wrong GPS week: 1024 weeks ahead.
        let future = Fix.fixture(seconds: 1024 * 7 * 86_400)
        let verdict = sut.evaluate(future, context: FilterContext(now: .seconds(101)))
        #expect(verdict.rejection?.kind == "implausibleTime")
        let next = Fix.fixture(seconds: 2)
        #expect(sut.evaluate(next, context: FilterContext(now: .seconds(102))).decision == .accept(next))
    }

    @Test func aSynchronisedClockRejectsAFutureFirstFix() {
        var sut = makeSUT()
        let context = FilterContext(now: .seconds(5), synchronisedTime: origin)
        let verdict = sut.evaluate(.fixture(seconds: 3_600), context: context)
        #expect(verdict.rejection == .implausibleTime(seconds: 3_600, limit: 30))
        #expect(sut.lastAccepted == nil)
    }

    @Test func aSynchronisedClockAllowsGPSTimeBeforeTheUTCOffsetIsKnown() {
        var sut = makeSUT()
        let fix = Fix.fixture(seconds: 18)
        #expect(sut.evaluate(fix, context: FilterContext(synchronisedTime: origin)).passed)
    }

    @Test func aFixFarBehindTheMonotonicClockIsRejected() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 1_000), context: FilterContext(now: .seconds(0)))
        // 20 minutes later by the monotonic clock, the receiver says 10 minutes later: a stale time.
        let verdict = sut.evaluate(.fixture(seconds: 1_600), context: FilterContext(now: .seconds(1_200)))
        #expect(verdict.rejection?.kind == "implausibleTime")
    }

    @Test func monotonicDriftWithinAHundredPartsPerMillionIsTolerated() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0), context: FilterContext(now: .seconds(0)))
        // A day later the two clocks differ by 35 s: 30 s allowed plus 8.6 s of drift.
        let fix = Fix.fixture(seconds: 86_400 + 35, metresNorth: 1_000)
        #expect(sut.evaluate(fix, context: FilterContext(now: .seconds(86_400))).passed)
    }

    // MARK: Re-anchoring

    @Test func reanchorsAfterThreeConsistentFixesFarAway() {
        var sut = StandardLocationFilter(options: .init(reanchorAfter: 3))
        _ = sut.evaluate(.fixture(seconds: 0), context: FilterContext(now: .seconds(0)))
        // Towed 20 km in a minute (no tracking), then three fixes a second apart there.
        var verdicts: [FilterVerdict] = []
        for s in 60...62 {
            let fix = Fix.fixture(seconds: Double(s), metresNorth: 20_000 + Double(s - 60))
            verdicts.append(sut.evaluate(fix, context: FilterContext(now: .seconds(Double(s)))))
        }
        #expect(verdicts[0].rejection?.kind == "implausibleJump")
        #expect(verdicts[1].rejection?.kind == "implausibleJump")
        #expect(verdicts[2].passed)
        #expect(verdicts[2].reanchoredAfter == 3)
        let after = Fix.fixture(seconds: 63, metresNorth: 20_003)
        #expect(sut.evaluate(after, context: FilterContext(now: .seconds(63))).decision == .accept(after))
    }

    @Test func scatteredOutliersNeverReanchor() {
        var sut = StandardLocationFilter(options: .init(reanchorAfter: 3))
        _ = sut.evaluate(.fixture(seconds: 0))
        for (s, north) in [(1.0, 5_000.0), (2, -6_000), (3, 7_000), (4, 9_000.0 * -1)] {
            #expect(!sut.evaluate(.fixture(seconds: s, metresEast: north)).passed)
        }
        #expect(sut.lastAccepted == .fixture(seconds: 0))
    }

    @Test func reanchorsAwayFromAFutureReferenceWithoutClocks() {
        // A replayed log: no monotonic clock; the first fix is dated a year ahead.
        var sut = StandardLocationFilter(options: .init(reanchorAfter: 3))
        _ = sut.evaluate(.fixture(seconds: 365 * 86_400))
        #expect(sut.evaluate(.fixture(seconds: 1)).rejection == .outOfSequence)
        #expect(sut.evaluate(.fixture(seconds: 2)).rejection == .outOfSequence)
        let third = sut.evaluate(.fixture(seconds: 3))
        #expect(third.passed && third.reanchoredAfter == 3)
    }

    @Test func reanchoringCanBeSwitchedOff() {
        var sut = StandardLocationFilter(options: .init(reanchorAfter: 0))
        _ = sut.evaluate(.fixture(seconds: 0))
        for s in 60...70 { #expect(!sut.evaluate(.fixture(seconds: Double(s), metresNorth: 20_000)).passed) }
    }

    // MARK: Warm-up

    @Test func skipsAMovingFixInTheFirstSecondsOfASessionWhateverItEstimates() {
        var sut = StandardLocationFilter(options: .init(warmUp: .seconds(3)))
        let early = sut.evaluate(.fixture(accuracy: 4, speed: 10), context: FilterContext(sessionAge: .seconds(1)))
        #expect(early.rejection == .warmingUp(seconds: 1, accuracy: 4))
        #expect(sut.evaluate(.fixture(seconds: 3, speed: 10), context: FilterContext(sessionAge: .seconds(3))).passed)
    }

    @Test func aStillFixThatStartsAStopWaitsOutTheWarmUp() {
        var sut = StandardLocationFilter(options: .init(warmUp: .seconds(3), thinning: nil))
        _ = sut.evaluate(.fixture(seconds: 0, speed: 10))
        let first = sut.evaluate(.fixture(seconds: 60, metresNorth: 400, speed: 0.1), context: FilterContext(sessionAge: .zero))
        #expect(first.rejection == .warmingUp(seconds: 0, accuracy: 4))
    }

    @Test func aStillFixWithNothingBeforeItWaitsOutTheWarmUp() {
        var sut = StandardLocationFilter(options: .init(warmUp: .seconds(3)))
        #expect(sut.evaluate(.fixture(speed: 0.1), context: FilterContext(sessionAge: .zero)).rejection == .warmingUp(seconds: 0, accuracy: 4))
    }

    @Test func aStillFixWithinTheNoiseOfTheStillPositionPassesTheWarmUp() {
        var sut = StandardLocationFilter(options: .init(warmUp: .seconds(3), thinning: nil))
        _ = sut.evaluate(.fixture(seconds: 0, speed: 0.1))
        // Both fixes estimate 4 m: within 2 · (4 + 4) = 16 m the thing has not moved.
        #expect(sut.evaluate(.fixture(seconds: 300, metresNorth: 15, speed: 0.1), context: FilterContext(sessionAge: .zero)).passed)
    }

    @Test func aStillFixDisplacedFromTheStillPositionWaitsOutTheWarmUp() {
        var sut = StandardLocationFilter(options: .init(warmUp: .seconds(3), thinning: nil))
        _ = sut.evaluate(.fixture(seconds: 0, speed: 0.1))
        let moved = sut.evaluate(.fixture(seconds: 300, metresNorth: 17, speed: 0.1), context: FilterContext(sessionAge: .zero))
        #expect(moved.rejection == .warmingUp(seconds: 0, accuracy: 4))
    }

    @Test func warmUpNeedsToKnowTheSession() {
        var sut = StandardLocationFilter(options: .init(warmUp: .seconds(3)))
        #expect(sut.evaluate(.fixture(speed: 10)).passed)
    }

    // MARK: Duplicates

    @Test func theSameEpochFromAnotherTalkerIsADuplicateEvenWhenRejectedBefore() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        let epoch = Fix.fixture(seconds: -5)
        #expect(sut.evaluate(epoch).rejection == .outOfSequence)
        // The same sentence re-sent (or GN after GP): counted as a duplicate, not out of sequence again.
        #expect(sut.evaluate(epoch).rejection == .duplicate)
    }

    // MARK: Thinning

    @Test func thinningHoldsAFixAndStoresItWhenTheNextEndsTheStop() {
        var sut = StandardLocationFilter(options: .init(thinning: .init(rule: .errorBudget(tolerance: 30))))
        #expect(sut.evaluate(.fixture(seconds: 0)).store == [.fixture(seconds: 0)])
        let held = sut.evaluate(.fixture(seconds: 10, metresNorth: 3))
        #expect(held.passed && held.store.isEmpty && held.thinned.isEmpty)
        let moving = Fix.fixture(seconds: 20, metresNorth: 60, speed: 6)
        let verdict = sut.evaluate(moving)
        #expect(verdict.store == [.fixture(seconds: 10, metresNorth: 3), moving])
    }

    @Test func theHeldFixIsStoredByFlush() {
        var sut = StandardLocationFilter(options: .init(thinning: .init()))
        _ = sut.evaluate(.fixture(seconds: 0))
        _ = sut.evaluate(.fixture(seconds: 10))
        #expect(sut.flush() == [.fixture(seconds: 10)])
        #expect(sut.flush().isEmpty)
    }
}
