import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct TrackThinningTests {
    private func makeSUT(_ rule: TrackThinning.Rule = .errorBudget(tolerance: 30)) -> TrackThinning {
        TrackThinning(options: .init(rule: rule, heartbeat: .seconds(3600), maxHeld: .seconds(300)))
    }

    /// Feeds the fixes; returns what was stored (with the held one flushed at the end) and the thinned count.
    private func run(_ sut: inout TrackThinning, _ fixes: [Fix]) -> (stored: [Fix], thinned: Int) {
        var stored: [Fix] = [], thinned = 0
        for fix in fixes {
            let step = sut.add(fix)
            stored += step.store
            thinned += step.thinned.count
        }
        return (stored + sut.flush(), thinned)
    }

    @Test func parkedJitterIsThinnedToTheFirstFixAndTheHeartbeats() {
        var sut = makeSUT()
        var random = SplitMix64(seed: 3)
        let fixes = (0..<7200).map { s in
            Fix.fixture(seconds: Double(s), metresNorth: 15 * (random.nextUnit() - 0.5), metresEast: 15 * (random.nextUnit() - 0.5))
        }
        let (stored, thinned) = run(&sut, fixes)
        // The first, one an hour, and the last (flushed).
        #expect(stored.map(\.time) == [fixes[0].time, fixes[3600].time, fixes[7199].time])
        #expect(stored.count + thinned == fixes.count)
    }

    @Test func aStraightDriveKeepsItsEndsAndOneFixPerMaxHeld() {
        var sut = makeSUT()
        let fixes = (0...600).map { s in Fix.fixture(seconds: Double(s), metresNorth: 15 * Double(s), speed: 15, course: 0) }
        let (stored, thinned) = run(&sut, fixes)
        #expect(stored.map(\.time) == [fixes[0], fixes[300], fixes[600]].map(\.time))
        #expect(thinned == fixes.count - 3)
    }

    @Test func keepsTheLastFixOfAStopAndTheFirstOfTheDeparture() {
        var sut = makeSUT()
        let stop = (0..<120).map { s in Fix.fixture(seconds: Double(s), metresNorth: 2 * sin(Double(s))) }
        let drive = (120..<180).map { s in Fix.fixture(seconds: Double(s), metresNorth: 12 * Double(s - 119), speed: 12, course: 0) }
        let (stored, _) = run(&sut, stop + drive)
        #expect(stored.contains(stop[0]))
        #expect(stored.contains(stop[119]))
        #expect(stored.contains(drive[0]))
    }

    @Test func keepsTheFirstFixOfAStop() {
        var sut = makeSUT()
        let drive = (0..<60).map { s in Fix.fixture(seconds: Double(s), metresNorth: 12 * Double(s), speed: 12, course: 0) }
        let stop = (60..<120).map { s in Fix.fixture(seconds: Double(s), metresNorth: 720) }
        let (stored, _) = run(&sut, drive + stop)
        #expect(stored.contains(drive[59]))
        #expect(stored.contains(stop[0]))
    }

    @Test func keepsTheFixesEitherSideOfATurn() {
        var sut = makeSUT()
        let north = (0..<30).map { s in Fix.fixture(seconds: Double(s), metresNorth: 10 * Double(s), speed: 10, course: 0) }
        let east = (30..<60).map { s in Fix.fixture(seconds: Double(s), metresNorth: 290, metresEast: 10 * Double(s - 29), speed: 10, course: 90) }
        let (stored, _) = run(&sut, north + east)
        #expect(stored.contains(north[29]))
        #expect(stored.contains(east[0]))
    }

    @Test func theThinnedTrackStaysWithinTheBudgetLessEachFixsOwnErrorOfTheFullOne() {
        // Budget 20 m, fixes of 4 m accuracy (95 % radius 8 m): thinning may move the track 12 m.
        var sut = makeSUT(.errorBudget(tolerance: 20))
        // A slow curve the turn rule does not catch (3° a second), with no speed reported.
        let fixes = (0..<300).map { s -> Fix in
            let angle = Double(s) * 3 * .pi / 180
            return Fix.fixture(seconds: Double(s), metresNorth: 300 * sin(angle), metresEast: 300 * (1 - cos(angle)), accuracy: 4, speed: nil, course: nil)
        }
        let (stored, _) = run(&sut, fixes)
        #expect(stored.count < fixes.count / 3)
        #expect(fixes.map { distanceFromTrack(stored, at: $0) }.max() ?? .infinity <= 12.01)
    }

    @Test func aFixWhoseOwnErrorFillsTheBudgetIsNeverThinned() {
        // 15 m accuracy: a 95 % radius of 30 m, the whole budget. A straight drive wobbling by 1 m.
        var sut = makeSUT(.errorBudget(tolerance: 30))
        let fixes = (0..<60).map { s in
            Fix.fixture(seconds: Double(s), metresNorth: 10 * Double(s), metresEast: s % 2 == 0 ? 0 : 1, accuracy: 15, speed: 10, course: 0)
        }
        let (stored, thinned) = run(&sut, fixes)
        #expect(stored.count == fixes.count)
        #expect(thinned == 0)
    }

    @Test func precisePositionsLeaveThinningMoreOfTheBudgetThanNoisyOnes() {
        // A straight drive wobbling by 10 m: within 30 − 2 × 2 = 26 m, beyond 30 − 2 × 12 = 6 m.
        func stored(accuracy: Double) -> Int {
            var sut = makeSUT(.errorBudget(tolerance: 30))
            let fixes = (0..<60).map { s in
                Fix.fixture(seconds: Double(s), metresNorth: 10 * Double(s), metresEast: s % 2 == 0 ? 0 : 10, accuracy: accuracy, speed: 10, course: 0)
            }
            return run(&sut, fixes).stored.count
        }
        #expect(stored(accuracy: 2) == 2)
        #expect(stored(accuracy: 12) > 20)
    }

    @Test func stillAtOneSpotThinningMayUseTheWholeBudget() {
        // Parked with ±10 m of jitter and 8 m accuracy: dropped fixes up to 28 m from the kept track,
        // more than 30 − 2 × 8 = 14 m, but within the fixes' noise of one spot, not motion the track
        // would lose.
        var sut = makeSUT(.errorBudget(tolerance: 30))
        var random = SplitMix64(seed: 5)
        let fixes = (0..<600).map { s in
            Fix.fixture(seconds: Double(s), metresNorth: 20 * (random.nextUnit() - 0.5), metresEast: 20 * (random.nextUnit() - 0.5), accuracy: 8)
        }
        let (stored, _) = run(&sut, fixes)
        #expect(stored.map(\.time) == [fixes[0].time, fixes[599].time])
    }

    @Test func aSlowDriftUnderTheStillSpeedIsThinnedAsMotion() {
        // 0.3 m/s with 4 m accuracy, zig-zagging 25 m across the course: the speed says still, but
        // the fixes leave the first one's noise within a minute, so thinning gets only 30 − 8 = 22 m.
        var sut = makeSUT(.errorBudget(tolerance: 30))
        let fixes = (0..<600).map { s -> Fix in
            let east: Double = (s / 30) % 2 == 0 ? 0 : 25
            return Fix.fixture(seconds: Double(s), metresNorth: 0.3 * Double(s), metresEast: east, accuracy: 4, speed: 0.3, course: 0)
        }
        let (stored, _) = run(&sut, fixes)
        #expect(stored.count > 10)
    }

    @Test func aFixWithoutAnAccuracyEstimateSpendsATypicalFixsShare() {
        let fix = Fix.fixture(accuracy: nil)  // and so no HDOP
        #expect(TrackThinning.share(of: 30, for: fix) == 30 - 2 * Fix.typicalAccuracy)
        #expect(TrackThinning.share(of: 30, for: .fixture(accuracy: 20)) == 0)
    }

    /// How far `fix` is from the track through `stored`, interpolated in time at the fix's time.
    private func distanceFromTrack(_ stored: [Fix], at fix: Fix) -> Double {
        let t = fix.time
        guard let i = stored.lastIndex(where: { $0.time <= t }) else { return .infinity }
        let a = stored[i], b = stored[min(i + 1, stored.count - 1)]
        let span = b.time.timeIntervalSince(a.time)
        let there = span > 0 ? Geodesy.interpolate(a.coordinate, b.coordinate, fraction: t.timeIntervalSince(a.time) / span) : a.coordinate
        return Geodesy.distance(there, fix.coordinate)
    }

    @Test func theMinimumsRuleKeepsAFixEveryHundredMetres() {
        // 99.9 m: the fixtures' ten 10 m steps add up to a hair under 100 m.
        var sut = makeSUT(.minimums(distance: 99.9, angle: 10, period: .seconds(300)))
        let fixes = (0...100).map { s in Fix.fixture(seconds: Double(s), metresNorth: 10 * Double(s), speed: 10, course: 0) }
        let (stored, thinned) = run(&sut, fixes)
        #expect(stored.map(\.time) == stride(from: 0, through: 100, by: 10).map { fixes[$0].time })
        #expect(stored.count + thinned == fixes.count)
    }

    @Test func theMinimumsRuleCountsItsOwnReason() {
        var sut = makeSUT(.minimums(distance: 100, angle: 10, period: .seconds(300)))
        _ = sut.add(.fixture(seconds: 0))
        _ = sut.add(.fixture(seconds: 1))
        #expect(sut.add(.fixture(seconds: 2)).thinned == [.belowMinimums])
    }
}
