import Clocks
import Logging
import Testing
import TernCore
import TernGateway
import TernTesting

/// The gateway's spec, with fakes: it brokers between receiver, filter, queue, forwarder and scheduler.
@Suite struct GatewayTests {
    struct Harness {
        let receiver = FakeReceiver()
        let queue = InMemoryPositionQueue()
        let forwarder = SpyForwarder()
        let clock = TestClock()
        let sut: Gateway<TestClock<Duration>>

        init(interval: Int = 60, timeout: Int = 30, maxAccuracy: Double = 25) {
            sut = Gateway(
                receiver: receiver,
                filter: StandardLocationFilter(options: .init(maxAccuracy: maxAccuracy)),
                queue: queue, forwarder: forwarder,
                scheduler: DutyCycleScheduler(options: .init(interval: .seconds(interval), acquisitionTimeout: .seconds(timeout))),
                clock: clock, logger: .quiet())
        }

        /// Starts the gateway in a child task and waits until it powered the receiver on.
        func running(_ body: (Harness) async throws -> Void) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await sut.run() }
                #expect(await eventually { receiver.calls.count >= 1 })
                try await body(self)
                group.cancelAll()
            }
        }

        func emitAndWait(_ fix: Fix) async {
            let seen = await sut.status().fixesSeen
            receiver.emit(fix)
            _ = await eventually { await sut.status().fixesSeen > seen }
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

    @Test func rejectedFixKeepsTheReceiverOn() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(accuracy: 80))
            #expect(h.receiver.calls == [.powerOn])
        }
    }

    @Test func acceptedFixPowersTheReceiverOff() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture())
            #expect(h.receiver.calls == [.powerOn, .powerOff])
        }
    }

    @Test func fixWhileTheSchedulerWantsNoneIsDropped() async throws {
        try await Harness().running { h in
            await h.emitAndWait(.fixture(seconds: 0))
            await h.emitAndWait(.fixture(seconds: 1))
            #expect(h.queue.items.count == 1)
            #expect(await h.sut.status().fixesUnwanted == 1)
        }
    }

    @Test func receiverIsPoweredAgainWhenTheNextFixIsDue() async throws {
        try await Harness(interval: 60).running { h in
            await h.emitAndWait(.fixture())
            await h.clock.advance(by: .seconds(60))
            #expect(await eventually { h.receiver.calls == [.powerOn, .powerOff, .powerOn] })
        }
    }

    @Test func receiverIsNotPoweredBeforeTheNextFixIsDue() async throws {
        try await Harness(interval: 60).running { h in
            await h.emitAndWait(.fixture())
            await h.clock.advance(by: .seconds(59))
            #expect(!(await eventually(within: .milliseconds(50)) { h.receiver.calls.count > 2 }))
        }
    }

    @Test func acquisitionTimeoutPowersTheReceiverOff() async throws {
        try await Harness(timeout: 30).running { h in
            await h.clock.advance(by: .seconds(30))
            #expect(await eventually { h.receiver.calls == [.powerOn, .powerOff] })
            #expect(await h.sut.status().acquisitionTimeouts == 1)
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
        try await Harness(interval: 10).running { h in
            h.queue.failWrites(with: FakeError.diskFull)
            await h.emitAndWait(.fixture(seconds: 0))
            #expect(await h.sut.status().pendingWrites == 1)
            h.queue.failWrites(with: nil)
            await h.clock.advance(by: .seconds(10))
            _ = await eventually { h.receiver.isPowered }
            await h.emitAndWait(.fixture(seconds: 10))
            #expect(h.queue.items.map(\.position.fix.time) == [Fix.fixture(seconds: 0).time, Fix.fixture(seconds: 10).time])
        }
    }

    @Test func cancellationPowersTheReceiverOff() async throws {
        let h = Harness()
        try await h.running { _ in }
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

enum FakeError: Error { case diskFull, unplugged }
