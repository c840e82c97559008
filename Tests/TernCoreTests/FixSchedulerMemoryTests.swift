import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct FixSchedulerMemoryTests {
    /// No ephemeris refreshes get in the way of the cycles (a window of ~3 years), except where a test says.
    /// The interval rules alone: no warm-up wait, no plausibility recheck.
    private let options: FixScheduler.Options = {
        var options = FixScheduler.Options(
            policy: .adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900)), acquisitionTimeout: .seconds(30),
            energy: { var e = ReceiverEnergy.mt3339; e.hotStartWindow = .seconds(100_000_000); return e }())
        options.warmUp = WarmUpRule(period: .zero)
        options.plausibility = nil
        return options
    }()

    /// Feeds a good fix `metresNorth` of the spot at `seconds` and its acceptance; returns the wake-up asked for.
    @discardableResult
    private func fix(_ sut: inout FixScheduler, at seconds: Double, north: Double = 0, speed: Double = 0) -> Duration? {
        let now = Duration.seconds(seconds)
        _ = sut.handle(.fixReceived(.fixture(seconds: seconds, metresNorth: north, accuracy: 4, speed: speed), now: now))
        return sut.handle(.delivered(accepted: true, now: now)).compactMap { if case let .wake(at) = $0 { at } else { nil } }.last
    }

    private func wake(_ actions: [FixSchedulerAction]) -> Duration? {
        actions.compactMap { if case let .wake(at) = $0 { at } else { nil } }.last
    }

    /// A receiver still for `hours`, cycling as the scheduler says; returns it at its last fix and that time.
    private func parked(hours: Double) -> (FixScheduler, Double) {
        var sut = FixScheduler(options: options)
        _ = sut.handle(.start(now: .zero))
        var at = 35.0
        while true {
            let next = fix(&sut, at: at) ?? .zero
            if next.seconds > hours * 3600 || next.seconds <= at { return (sut, at) }
            _ = sut.handle(.timerFired(now: next))
            at = next.seconds + 1.5
        }
    }

    /// A scheduler restarted (from `memory`, if any) after `downtime`, at its first still fix; returns the interval it then chose.
    private func intervalAfterRestart(_ memory: FixScheduler.Memory?, downtime: Double = 10) -> Double {
        var sut = FixScheduler(options: options)
        if let memory { sut.remember(memory, downtime: .seconds(downtime)) }
        _ = sut.handle(.start(now: .zero))
        return (fix(&sut, at: 1.5) ?? .zero).seconds - 1.5
    }

    @Test func aRestartThatRemembersKeepsTheLongStillIntervals() throws {
        let (before, at) = parked(hours: 6)
        let memory = try #require(before.memory(now: .seconds(at + 60)))
        #expect(intervalAfterRestart(memory) == 900)
        #expect(intervalAfterRestart(nil) < 30)  // afresh: as cautious as at boot
    }

    @Test func theDowntimeAgesTheEphemeris() {
        func firstTimeout(ephemerisAge: Double, downtime: Double) -> Duration? {
            var sut = FixScheduler(options: .init(policy: options.policy, acquisitionTimeout: .seconds(30)))
            sut.remember(.init(elapsedSeconds: 3600, badTimeSeconds: 0, ephemerisAgeSeconds: ephemerisAge), downtime: .seconds(downtime))
            return wake(sut.handle(.start(now: .zero)))
        }
        #expect(firstTimeout(ephemerisAge: 3000, downtime: 10) == .seconds(10))  // young: a hot start is expected
        #expect(firstTimeout(ephemerisAge: 3000, downtime: 5000) == .seconds(120))  // past the 2 h window: warm
    }

    @Test func movingDuringTheDowntimeIsNotCharged() throws {
        let (before, at) = parked(hours: 1)
        let memory = try #require(before.memory(now: .seconds(at)))
        var sut = FixScheduler(options: options)
        sut.remember(memory, downtime: .seconds(3600))
        _ = sut.handle(.start(now: .zero))
        fix(&sut, at: 1.5, north: 20_000, speed: 15)  // 20 km away, driving
        #expect(sut.badTime == memory.badTimeSeconds)
        #expect(!sut.motion.isStill)
    }

    @Test func memoryIsRememberedOnlyBeforeTheStart() {
        var sut = FixScheduler(options: options)
        _ = sut.handle(.start(now: .zero))
        sut.remember(.init(elapsedSeconds: 1e6, badTimeSeconds: 0, typicalSpeed: 9), downtime: .zero)
        fix(&sut, at: 1.5)
        #expect(sut.typicalSpeed == nil)
    }

    @Test func memoryRoundTripsThroughJSON() throws {
        let (before, at) = parked(hours: 1)
        let memory = try #require(before.memory(now: .seconds(at)))
        let decoded = try JSONDecoder().decode(FixScheduler.Memory.self, from: JSONEncoder().encode(memory))
        #expect(decoded == memory)
    }
}
