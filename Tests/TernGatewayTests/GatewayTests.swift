import Foundation
import Clocks
import Logging
import Synchronization
import Testing
import TernCore
import TernGateway
import TernTesting

/// The gateway's spec, with fakes: it brokers between receiver, scheduler, filter, queue and forwarder.
@Suite(.timeLimit(.minutes(3))) struct GatewayTests {
    struct Harness {
        let receiver = FakeReceiver()
        let power = SpyPowerSwitch()
        let clock = TestClock()
        let queue = InMemoryPositionQueue()
        let forwarder = SpyForwarder()
        let timeSink = SpyTimeSink()
        let switched: SwitchedReceiver
        let options: FixScheduler.Options
        let sut: Gateway<TestClock<Duration>>

        /// The stale-ephemeris timeout equals `timeout`, so every acquisition gives up at `timeout`.
        /// Unlike the shipped configuration, by default no warm-up, no thinning, and every accepted
        /// position written at once: these tests watch the queue fix by fix (the shipped rules have
        /// their own tests, and `DemoPipelineTests` and `SimulatorCrossCheckTests` run the daemon's
        /// gateway with board/simulated.toml as shipped).
        /// - Parameter throughSwitch: the gateway's receiver forwards power to `power`, stamping each change.
        init(
            policy: FixPolicy = .fixed(interval: .seconds(60)), timeout: Int = 30, maxAccuracy: Double = 25,
            throughSwitch: Bool = false, memory: InMemorySchedulerMemory? = nil, thinning: TrackThinning.Options? = nil,
            warmUp: Duration = .zero, commitWindow: GroupCommit.Window = .immediate
        ) {
            switched = SwitchedReceiver(fixes: receiver, power: power, clock: clock)
            var tuning = FixScheduler.Tuning.shipped
            tuning.staleEphemerisTimeout = .seconds(timeout)
            options = FixScheduler.Options(policy: policy, acquisitionTimeout: .seconds(timeout), tuning: tuning)
            sut = Gateway(
                configuration: GatewayCore.Configuration(
                    scheduler: options, filter: .init(maxAccuracy: maxAccuracy, warmUp: warmUp, thinning: thinning), commitWindow: commitWindow),
                receiver: throughSwitch ? switched : receiver, queue: queue, forwarder: forwarder,
                clock: clock, memory: memory, wallClock: { Harness.wallNow }, timeSink: timeSink, logger: .quiet())
        }

        /// The time of day the gateway sees (fixed: the tests measure downtimes from it).
        static let wallNow = Date(timeIntervalSince1970: 1_795_000_000)

        /// Starts the gateway in a child task and waits until it powered the receiver on.
        func running(_ body: (Harness) async throws -> Void) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await sut.run() }
                let started = await eventually {
                    if receiver.calls.count >= 1 { return true }
                    return await sut.status().lastError != nil
                }
                #expect(started)
                try await body(self)
                group.cancelAll()
            }
        }

        func emitAndWait(_ fix: Fix) async {
            let sut = sut
            let seen = await sut.status().reports
            receiver.emit(fix)
            // Handled, and what it led to written (the counters move before the shell's writes).
            _ = await eventually {
                let status = await sut.status()
                return status.reports > seen && status.pendingWrites == 0
            }
        }

        /// Advances virtual time; waits until `condition` holds, nudging the clock so that a timer
        /// registered just after the advance still fires.
        func advance(by duration: Duration, until condition: @Sendable () async -> Bool) async -> Bool {
            await clock.advance(by: duration)
            return await eventually {
                await clock.advance(by: .zero)
                return await condition()
            }
        }
    }

    @Test func startPowersTheReceiverOn() async throws {
        try await Harness().running { h in
            #expect(h.receiver.calls == [.powerOn])
        }
    }

    @Test func acceptedFixIsWrittenToTheQueue() async throws {
        try await Harness().running { h in
            let fix = Fix.fixture()
            await h.emitAndWait(fix)
            #expect(h.queue.items.map(\.position.fix) == [fix])
        }
    }

    @Test func acceptedFixTellsTheForwarder() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            #expect(h.forwarder.notifications == 1)
        }
    }

    @Test func rejectedFixIsNotWritten() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(accuracy: 80))
            #expect(h.queue.items.isEmpty)
            #expect(await h.sut.status().rejections == ["poorAccuracy": 1])
        }
    }

    @Test func aThinnedFixIsCountedNotStoredAndStillEndsTheCycle() async throws {
        try await Harness(thinning: TrackThinning.Options()).running { h in
            await h.emitAndWait(.fixture(seconds: 0))
            for cycle in 1...2 {
                #expect(await h.advance(by: .seconds(60)) { h.receiver.calls.filter { $0 == .powerOn }.count == cycle + 1 })
                // Parked jitter: within the budget of the kept track; the first of these is held, then thinned.
                await h.emitAndWait(.fixture(seconds: 60 * Double(cycle), metresNorth: 3 * Double(cycle)))
                #expect(h.receiver.calls.last == .powerOff)
            }
            #expect(h.queue.items.map(\.position.fix) == [.fixture(seconds: 0)])
            let status = await h.sut.status()
            #expect(status.thinned == ["withinBudget": 1])
            #expect(status.rejections.isEmpty)
            #expect(status.fixesAccepted == 3)
        }
    }

    @Test func theFixThinningHoldsIsStoredWhenTheGatewayStopsWithEveryPositionWrittenAtOnce() async throws {
        let h = Harness(thinning: TrackThinning.Options(), commitWindow: .immediate)
        try await h.running { h in
            await h.emitAndWait(.fixture(seconds: 0))
            #expect(await h.advance(by: .seconds(60)) { h.receiver.calls.filter { $0 == .powerOn }.count == 2 })
            await h.emitAndWait(.fixture(seconds: 60, metresNorth: 3))
            #expect(h.queue.items.count == 1)  // the second is held: the next fix shows what it was
        }
        // Stopped: the held fix is the track's last point, and is written before the run ends.
        #expect(h.queue.items.map(\.position.fix) == [.fixture(seconds: 0), .fixture(seconds: 60, metresNorth: 3)])
    }

    @Test func rejectedFixKeepsTheReceiverOn() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(accuracy: 80))
            #expect(h.receiver.calls == [.powerOn])
        }
    }

    @Test func fixWithoutAPositionIsNotDelivered() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(accuracy: nil, quality: .invalid))
            let status = await h.sut.status()
            #expect(status.fixesAccepted + status.rejections.count == 0)
            #expect(status.fixesSeen == 0 && status.noFixEpochs == 1)
            #expect(h.receiver.calls == [.powerOn])
        }
    }

    @Test func acceptedFixPowersTheReceiverOff() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            #expect(h.receiver.calls == [.powerOn, .powerOff])
        }
    }

    @Test func aFixLeftOverFromTheLastPowerCycleNeverSatisfiesTheScheduler() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(seconds: 0))
            _ = await h.advance(by: .seconds(60)) { h.receiver.calls.count == 3 }
            // Second 1's epoch, left open at the power-off, completed by the first sentence after power-on.
            await h.emitAndWait(.fixture(seconds: 1))
            #expect(h.receiver.calls == [.powerOn, .powerOff, .powerOn])
            await h.emitAndWait(.fixture(seconds: 61))
            #expect(h.queue.items.map(\.position.fix.time) == [Fix.fixture(seconds: 0).time, Fix.fixture(seconds: 61).time])
            #expect(h.receiver.calls == [.powerOn, .powerOff, .powerOn, .powerOff])
            #expect(await h.sut.status().staleFixes == 1)
        }
    }

    @Test func aTrustedFixReadLiveGivesTheTimeSinkItsUTCAndWhenItWasRead() async throws {
        try await Harness().running { h in
            var fix = Fix.fixture(seconds: 0)
            fix.receivedAt = fix.time.addingTimeInterval(0.25)
            await h.emitAndWait(fix)
            #expect(h.timeSink.samples == [ClockSample(receivedAt: fix.time.addingTimeInterval(0.25), utc: fix.time)])
        }
    }

    @Test func aFixLeftOverFromTheLastPowerCycleGivesTheTimeSinkNothing() async throws {
        try await Harness().running { h in
            var first = Fix.fixture(seconds: 0)
            first.receivedAt = first.time
            await h.emitAndWait(first)
            _ = await h.advance(by: .seconds(60)) { h.receiver.calls.count == 3 }
            var leftover = Fix.fixture(seconds: 1)
            leftover.receivedAt = Harness.wallNow
            await h.emitAndWait(leftover)
            #expect(h.timeSink.samples.map(\.utc) == [first.time])
        }
    }

    @Test func aFixNotReadLiveGivesTheTimeSinkNothing() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            #expect(h.timeSink.samples.isEmpty)
        }
    }

    @Test func theReceiverIsSwitchedOffBeforeTheAcceptedPositionIsWritten() async throws {
        let receiver = FakeReceiver()
        let queue = ObservingQueue { receiver.calls }
        let clock = TestClock()
        // The shipped commit window (the write comes up to a second after the power-off) and filter, but
        // for the warm-up: the session's first fix is the one to store.
        let sut = Gateway(
            configuration: GatewayCore.Configuration(scheduler: .init(policy: .fixed(interval: .seconds(60))), filter: .init(warmUp: .zero)),
            receiver: receiver, queue: queue, forwarder: SpyForwarder(), clock: clock, logger: .quiet())
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sut.run() }
            #expect(await eventually { receiver.calls == [.powerOn] })
            receiver.emit(.fixture())
            #expect(await eventually { receiver.calls == [.powerOn, .powerOff] })
            #expect(await eventually {
                await clock.advance(by: .milliseconds(100))
                return queue.callsAtEachWrite.count == 1
            })
            group.cancelAll()
        }
        #expect(queue.callsAtEachWrite == [[.powerOn, .powerOff]])
    }

    @Test func fixWhileTheReceiverIsOffIsDropped() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(seconds: 0))
            await h.emitAndWait(.fixture(seconds: 1))
            #expect(h.queue.items.count == 1)
            #expect(await h.sut.status().fixesUnwanted == 1)
        }
    }

    @Test func receiverIsPoweredAgainWhenTheNextFixIsDue() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            #expect(await h.advance(by: .seconds(60)) { h.receiver.calls == [.powerOn, .powerOff, .powerOn] })
        }
    }

    @Test func receiverIsNotPoweredBeforeTheNextFixIsDue() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            await h.clock.advance(by: .seconds(59))
            #expect(!(await eventually(within: .milliseconds(50)) { h.receiver.calls.count > 2 }))
        }
    }

    @Test func nextWakeIsReported() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            #expect(await h.sut.status().nextWake == .seconds(60))
        }
    }

    @Test func statusCarriesTheLastAcceptedFixAndTheSchedulersView() async throws {
        try await Harness().running { h in
            await h.clock.advance(by: .seconds(2))
            let fix = Fix.fixture()
            await h.emitAndWait(fix)
            await h.emitAndWait(.fixture(accuracy: 80))  // while off: never delivered
            let status = await h.sut.status()
            #expect(status.lastAccepted == fix)
            #expect(status.uptimeSeconds == 2)
            #expect(status.scheduler?.policy == "fixed 60s")
            #expect(status.scheduler?.phase == "off")
            #expect(status.scheduler?.nextPowerOnSeconds == 58)
        }
    }

    @Test func acquisitionTimeoutPowersTheReceiverOff() async throws {
        try await Harness(timeout: 30).running { h in
            #expect(await h.advance(by: .seconds(30)) { h.receiver.calls == [.powerOn, .powerOff] })
            #expect(await h.sut.status().acquisitionTimeouts == 1)
        }
    }

    @Test func alwaysOnStoresEveryFixWithoutSwitching() async throws {
        try await Harness(policy: .alwaysOn).running { h in
            for second in 0..<3 { await h.emitAndWait(.fixture(seconds: Double(second), metresNorth: Double(second))) }
            #expect(h.queue.items.count == 3)
            #expect(h.receiver.calls == [.powerOn])
        }
    }

    @Test func powerCyclesCountPowerOns() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            _ = await h.advance(by: .seconds(60)) { h.receiver.calls.count == 3 }
            #expect(await h.sut.status().powerCycles == 2)
        }
    }

    @Test func receiverOnTimeFollowsTheClock() async throws {
        try await Harness().running { h in
            await h.clock.advance(by: .seconds(7))
            await h.emitAndWait(.fixture())
            #expect(await h.sut.status().receiverOnSeconds == 7)
        }
    }

    @Test func storeFailureKeepsThePositionAndWritesItLater() async throws {
        try await Harness(policy: .fixed(interval: .seconds(10))).running { h in
            h.queue.failWrites(with: FakeError.diskFull)
            await h.emitAndWait(.fixture(seconds: 0))
            #expect(await h.sut.status().pendingWrites == 1)
            h.queue.failWrites(with: nil)
            _ = await h.advance(by: .seconds(10)) { h.receiver.isPowered }
            await h.emitAndWait(.fixture(seconds: 10))
            #expect(h.queue.items.map(\.position.fix.time) == [Fix.fixture(seconds: 0).time, Fix.fixture(seconds: 10).time])
        }
    }

    @Test func powerSwitchFailureIsReportedAndTheReceiverCountsAsOff() async throws {
        let h = Harness(throughSwitch: true)
        h.power.failNext(with: FakeError.gpioBusy)
        try await h.running { h in
            #expect(await eventually { await h.sut.status().lastError != nil })
            #expect(await !h.sut.status().receiverPowered)
        }
    }

    @Test func cancellationPowersTheReceiverOff() async throws {
        let h = Harness()
        try await h.running { _ in }
        #expect(h.receiver.calls == [.powerOn, .powerOff])
    }

    @Test func aPowerOffThatNeverCompletesEndsTheStopAfterItsLimit() async throws {
        let h = Harness()
        h.receiver.holdPowerOff()
        let stopped = StopFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await h.sut.run()
                stopped.set()
            }
            #expect(await eventually { h.receiver.calls.count >= 1 })
            group.cancelAll()
            // Virtual time runs from when the stop waits on the power-off and its limit (advancing
            // earlier would race the limit's registration); the stop must be over by the limit.
            #expect(await eventually(within: .seconds(30)) { h.receiver.isHoldingPowerOff })
            try await h.clock.sleeperRegistered()
            await h.clock.advance(by: Gateway<TestClock<Duration>>.powerOffLimit)
            // The held power-off itself gives up after 30 s of real time: the stop must end well before.
            #expect(await eventually(within: .seconds(10)) { stopped.isSet })
        }
        #expect(h.receiver.calls == [.powerOn])
    }

    @Test func cancellationWhileOffDoesNotSwitchAgain() async throws {
        let h = Harness()
        try await h.running { h in await h.emitAndWait(.fixture()) }
        #expect(h.receiver.calls == [.powerOn, .powerOff])
    }

    @Test func endOfFixesEndsTheRun() async throws {
        let h = Harness()
        h.receiver.finish()
        try await h.sut.run()
        #expect(h.receiver.calls == [.powerOn, .powerOff])
    }

    @Test func receiverFailureIsThrown() async throws {
        let h = Harness()
        h.receiver.finish(throwing: FakeError.unplugged)
        await #expect(throws: FakeError.unplugged) { try await h.sut.run() }
    }
}

/// Set once, by a task, read by the test.
private final class StopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Hours of virtual time through a receiver whose power goes through a `SpyPowerSwitch`.
/// What the scheduler learnt, across restarts (`SchedulerMemoryStore`).
@Suite(.timeLimit(.minutes(3))) struct GatewayMemoryTests {
    typealias Harness = GatewayTests.Harness
    private let adaptive = FixPolicy.adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900))

    /// Parked for 14 hours at the fixture spot, a day of running behind it, saved `savedAgo` before now.
    private func parkedMemory(savedAgo: TimeInterval) -> InMemorySchedulerMemory {
        let spot = Fix.fixture()
        let memory = FixScheduler.Memory(
            elapsedSeconds: 86_400, badTimeSeconds: 0, typicalSpeed: 12, ephemerisAgeSeconds: 600,
            lastFix: .init(time: .zero, coordinate: spot.coordinate, speed: 0, course: nil, accuracy: 4),
            lastFixAgeSeconds: 300, stillSeconds: 50_000)
        return InMemorySchedulerMemory((memory, Harness.wallNow.addingTimeInterval(-savedAgo)))
    }

    @Test func aRestartedGatewayResumesTheLongStillIntervals() async throws {
        try await Harness(policy: adaptive, memory: parkedMemory(savedAgo: 10)).running { h in
            await h.emitAndWait(.fixture())
            #expect(await h.sut.status().scheduler?.nextPowerOnSeconds == 900)
        }
    }

    @Test func withoutAMemoryTheGatewayStartsCautious() async throws {
        try await Harness(policy: adaptive, memory: InMemorySchedulerMemory()).running { h in
            await h.emitAndWait(.fixture())
            #expect((await h.sut.status().scheduler?.nextPowerOnSeconds ?? .infinity) < 30)
        }
    }

    @Test func aMemorySavedInTheFutureIsIgnored() async throws {
        // The clock was set back (a Pi without RTC before NTP): the downtime cannot be measured.
        try await Harness(policy: adaptive, memory: parkedMemory(savedAgo: -3600)).running { h in
            await h.emitAndWait(.fixture())
            #expect((await h.sut.status().scheduler?.nextPowerOnSeconds ?? .infinity) < 30)
        }
    }

    @Test func theMemoryIsSavedAfterTheFirstFixAndAtShutdown() async throws {
        let memory = InMemorySchedulerMemory()
        try await Harness(policy: adaptive, memory: memory).running { h in
            await h.emitAndWait(.fixture())
            #expect(await eventually { memory.saves == 1 })
            #expect(memory.saved?.savedAt == Harness.wallNow)
        }
        #expect(await eventually { memory.saves == 2 })
        #expect(memory.saved?.memory.lastFix?.coordinate == Fix.fixture().coordinate)
    }
}

@Suite(.timeLimit(.minutes(3))) struct GatewayVirtualTimeTests {
    @Test func powerLineIsSwitchedExactlyAsTheFixedPolicyDecides() async throws {
        let h = GatewayTests.Harness(policy: .fixed(interval: .seconds(60)), timeout: 30, throughSwitch: true)
        try await h.running { h in
            try await SkyDriver(harness: h, ttff: .seconds(3)).run(until: .seconds(3600))
        }
        let expected = (0..<60).flatMap { k in
            [Switching(on: true, at: .seconds(60 * k)), Switching(on: false, at: .seconds(60 * k + 3))]
        }
        #expect(Array(h.switched.log.prefix(120)) == expected)
        #expect(h.power.calls == h.switched.log.map(\.on))
    }

    @Test(arguments: [
        FixPolicy.fixed(interval: .seconds(300)), .adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900)),
    ])
    func noSkyNeverKeepsTheReceiverOnPastTheAcquisitionTimeout(policy: FixPolicy) async throws {
        let h = GatewayTests.Harness(policy: policy, timeout: 90, throughSwitch: true)
        // Open sky for 10 minutes, none for 30, open again for 20.
        let driver = SkyDriver(harness: h, ttff: .seconds(3)) { !(600..<2400).contains($0.seconds) }
        try await h.running { _ in try await driver.run(until: .seconds(3600)) }
        let spans = driver.poweredWithoutFix()
        #expect(spans.contains(.seconds(90)), "the no-sky period must have run into the timeout")
        #expect(spans.allSatisfy { $0 <= .seconds(90) }, "powered without a fix for \(spans.max() ?? .zero)")
    }

    @Test func fixesResumeAfterANoSkyPeriod() async throws {
        let h = GatewayTests.Harness(policy: .fixed(interval: .seconds(300)), timeout: 90, throughSwitch: true)
        let driver = SkyDriver(harness: h, ttff: .seconds(3)) { !(600..<2400).contains($0.seconds) }
        try await h.running { _ in try await driver.run(until: .seconds(3600)) }
        #expect(h.queue.items.contains { $0.position.fix.time > Fix.fixture(seconds: 2400).time })
    }
}

/// One power change with the virtual time it happened at.
struct Switching: Equatable, CustomStringConvertible {
    var on: Bool
    var at: Duration
    var description: String { "\(on ? "on" : "off")@\(at.seconds)" }
}

/// A receiver whose power goes through a `PowerSwitch` (as `NMEAReceiver`'s does); fixes and call
/// records come from a `FakeReceiver`, each successful switch is stamped with the clock's time.
final class SwitchedReceiver: GPSReceiver {
    private let fake: FakeReceiver
    private let power: any PowerSwitch
    private let clock: TestClock<Duration>
    private let start: TestClock<Duration>.Instant
    private let stamps = Mutex<[Switching]>([])

    init(fixes: FakeReceiver, power: any PowerSwitch, clock: TestClock<Duration>) {
        self.fake = fixes
        self.power = power
        self.clock = clock
        self.start = clock.now
    }

    var log: [Switching] { stamps.withLock { $0 } }

    func powerOn() async throws { try await set(on: true) }
    func powerOff() async throws { try await set(on: false) }
    func fixes() -> AsyncThrowingStream<Fix, any Error> { fake.fixes() }

    private func set(on: Bool) async throws {
        try await power.setPower(on: on)
        let at = start.duration(to: clock.now)
        stamps.withLock { $0.append(Switching(on: on, at: at)) }
        if on { try await fake.powerOn() } else { try await fake.powerOff() }
    }
}

/// Plays the sky for a running gateway in virtual time: while the receiver is powered under open
/// sky, a good fix arrives `ttff` after power-on and then every second (moving north at 1 m/s);
/// under no sky, a fix without a position every second. Steps the clock from event to event
/// (fix, the scheduler's wake-up) and waits for the gateway to finish each one.
final class SkyDriver: Sendable {
    let h: GatewayTests.Harness
    let ttff: Duration
    let sky: @Sendable (Duration) -> Bool
    private let goodFixes = Mutex<[Duration]>([])

    init(harness: GatewayTests.Harness, ttff: Duration, sky: @escaping @Sendable (Duration) -> Bool = { _ in true }) {
        self.h = harness
        self.ttff = ttff
        self.sky = sky
    }

    func run(until end: Duration) async throws {
        var now = Duration.zero
        while now < end {
            let status = await h.sut.status()
            let poweredAt = h.switched.log.last.flatMap { $0.on ? $0.at : nil }
            var next = end
            if let wake = status.nextWake { next = min(next, max(wake, now)) }
            var fixDue: Duration?
            if let poweredAt {
                // Fixes fall on whole seconds from power-on + ttff.
                let first = poweredAt + ttff
                fixDue = now < first ? first : now + .seconds(1)
                if let due = fixDue { next = min(next, due) }
            }
            let wakeUps = status.wakeUps
            await h.clock.advance(by: next - now)
            now = next
            if next == status.nextWake {
                try #require(
                    await eventually {
                        await h.clock.advance(by: .zero)
                        return await h.sut.status().wakeUps > wakeUps
                    }, "the gateway did not wake at \(next)")
            }
            guard next == fixDue, await h.sut.status().receiverPowered else { continue }
            if sky(now) {
                goodFixes.withLock { $0.append(now) }
                await h.emitAndWait(.fixture(seconds: now.seconds, metresNorth: now.seconds, speed: 1))
            } else {
                await h.emitAndWait(.fixture(seconds: now.seconds, accuracy: nil, quality: .invalid))
            }
        }
    }

    /// For each powered span: how long the receiver was on after its last good fix (or power-on).
    func poweredWithoutFix() -> [Duration] {
        let fixes = goodFixes.withLock { $0 }
        var spans: [Duration] = []
        var onAt: Duration?
        for change in h.switched.log {
            if change.on {
                onAt = change.at
            } else if let start = onAt {
                let lastFix = fixes.last { $0 >= start && $0 <= change.at } ?? start
                spans.append(change.at - lastFix)
                onAt = nil
            }
        }
        return spans
    }
}

enum FakeError: Error { case diskFull, unplugged, gpioBusy }

extension GatewayStatus {
    /// Everything the receiver reported: fixes and no-fix epochs.
    fileprivate var reports: Int { fixesSeen + noFixEpochs }
}

/// A queue that records, at each write, what the receiver had been told so far.
private final class ObservingQueue: PositionQueue {
    private let base = InMemoryPositionQueue()
    private let calls: @Sendable () -> [FakeReceiver.Call]
    private let seen = Mutex<[[FakeReceiver.Call]]>([])

    init(calls: @escaping @Sendable () -> [FakeReceiver.Call]) { self.calls = calls }

    var callsAtEachWrite: [[FakeReceiver.Call]] { seen.withLock { $0 } }
    var queueID: UUID { base.queueID }

    func enqueue(_ position: Position) async throws -> Int64 {
        let now = calls()
        seen.withLock { $0.append(now) }
        return try await base.enqueue(position)
    }

    func oldest(limit: Int) async throws -> [QueuedPosition] { try await base.oldest(limit: limit) }
    func acknowledge(through sequence: Int64) async throws { try await base.acknowledge(through: sequence) }
    func count() async throws -> Int { try await base.count() }
    func newest() async throws -> QueuedPosition? { try await base.newest() }
    func remove(sequence: Int64) async throws { try await base.remove(sequence: sequence) }
    func quarantine(sequence: Int64, reason: String) async throws { try await base.quarantine(sequence: sequence, reason: reason) }
}
