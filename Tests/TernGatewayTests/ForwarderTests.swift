import Clocks
import Logging
import Synchronization
import Testing
import TernCore
import TernGateway
import TernTesting

@Suite(.timeLimit(.minutes(1))) struct ForwarderTests {
    struct Harness {
        let queue = InMemoryPositionQueue()
        let uplink: ScriptedUplink
        let connectivity = ManualConnectivity()
        let clock = TestClock()
        let sut: Forwarder<TestClock<Duration>>

        init(script: [UplinkResult] = [], batchSize: Int = 2) {
            uplink = ScriptedUplink(script)
            sut = Forwarder(
                queue: queue, uplink: uplink, connectivity: connectivity,
                backoff: Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0),
                batchSize: batchSize, clock: clock, logger: .quiet())
        }

        func enqueue(_ count: Int) async throws {
            for i in 0..<count { try await queue.enqueue(.fixture(seconds: Double(i))) }
        }

        func running(_ body: (Harness) async throws -> Void) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sut.run() }
                try await body(self)
                group.cancelAll()
            }
        }
    }

    @Test func leftoversFromAnEarlierRunAreUploadedAtStart() async throws {
        let h = Harness()
        try await h.enqueue(3)
        try await h.running { h in
            #expect(await eventually { h.queue.items.isEmpty })
            #expect(h.uplink.delivered.map(\.sequence) == [1, 2, 3])
        }
    }

    @Test func uploadsInBatchesOfTheConfiguredSize() async throws {
        let h = Harness(batchSize: 2)
        try await h.enqueue(5)
        try await h.running { h in
            #expect(await eventually { h.queue.items.isEmpty })
            #expect(h.uplink.batches.map(\.count) == [2, 2, 1])
        }
    }

    @Test func newPositionsAreUploadedWhenSignalled() async throws {
        try await Harness().running { h in
            _ = await eventually { h.sut.status().state == "idle" }
            try await h.enqueue(1)
            h.sut.positionsAvailable()
            #expect(await eventually { h.sut.status().uploaded == 1 })
        }
    }

    @Test func failedBatchStaysQueuedUntilTheRetrySucceeds() async throws {
        let h = Harness(script: [.retryable(reason: "connection refused")])
        try await h.enqueue(1)
        try await h.running { h in
            #expect(await eventually { h.sut.status().state.hasPrefix("backingOff") })
            #expect(h.queue.items.count == 1)
            await h.clock.advance(by: .seconds(1))
            // The back-off timer may register just after the advance: nudge the clock until it fires.
            #expect(await eventually {
                await h.clock.advance(by: .zero)
                return h.queue.items.isEmpty
            })
            #expect(h.uplink.batches.count == 2)
        }
    }

    @Test func retryWaitsForTheBackoff() async throws {
        let h = Harness(script: [.retryable(reason: "refused"), .retryable(reason: "refused")])
        try await h.enqueue(1)
        try await h.running { h in
            #expect(await eventually { h.sut.status().state.hasPrefix("backingOff") })
            await h.clock.advance(by: .milliseconds(999))
            #expect(!(await eventually(within: .milliseconds(50)) { h.uplink.batches.count > 1 }))
        }
    }

    @Test func connectivityBackRetriesWithoutWaiting() async throws {
        let h = Harness(script: [.retryable(reason: "network down")])
        try await h.enqueue(1)
        try await h.running { h in
            #expect(await eventually { h.sut.status().failedAttempts == 1 })
            h.connectivity.announce(.mayBeOnline)
            #expect(await eventually { h.queue.items.isEmpty })
        }
    }

    @Test func permanentFailureIsReportedAndNothingIsDropped() async throws {
        let h = Harness(script: [.permanent(reason: "HTTP 401: check uplink.token")])
        try await h.enqueue(2)
        try await h.running { h in
            #expect(await eventually { h.sut.status().blockedReason == "HTTP 401: check uplink.token" })
            #expect(h.queue.items.count == 2)
        }
    }

    @Test func failedAttemptsAreCountedByClass() async throws {
        let h = Harness(script: [.retryable(reason: "network down"), .permanent(reason: "HTTP 401")])
        try await h.enqueue(1)
        try await h.running { h in
            #expect(await eventually { h.sut.status().failures["retryable"] == 1 })
            h.connectivity.announce(.mayBeOnline)
            #expect(await eventually { h.sut.status().failures["permanent"] == 1 })
            #expect(h.sut.status().failures["rejected"] == nil)
        }
    }

    @Test func drainSendsEverythingLeft() async throws {
        let h = Harness(batchSize: 2)
        try await h.enqueue(5)
        let drained = await h.sut.drain(timeout: .seconds(5))
        #expect(drained)
        #expect(h.uplink.delivered.map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(h.sut.status().uploaded == 5)
        #expect(try await h.queue.count() == 0)
    }

    @Test func drainStopsAtAFailureAndKeepsWhatIsLeft() async throws {
        let h = Harness(script: [.delivered, .retryable(reason: "reset")], batchSize: 2)
        try await h.enqueue(5)
        let drained = await h.sut.drain(timeout: .seconds(5))
        #expect(!drained)
        #expect(try await h.queue.count() == 3)
        #expect(h.sut.status().failures["retryable"] == 1)
    }
    // MARK: a stop with an upload under way

    /// A forwarder of batches of one over `uplink`, with three positions queued.
    private func stopping(_ uplink: HeldUplink, stopGrace: Duration = .seconds(10)) async throws
        -> (sut: Forwarder<TestClock<Duration>>, queue: InMemoryPositionQueue, clock: TestClock<Duration>) {
        let queue = InMemoryPositionQueue(), clock = TestClock()
        for i in 0..<3 { try await queue.enqueue(.fixture(seconds: Double(i))) }
        let sut = Forwarder(
            queue: queue, uplink: uplink, batchSize: 1, stopGrace: stopGrace, graceClock: clock, clock: clock, logger: .quiet())
        return (sut, queue, clock)
    }

    @Test func anUploadUnderWayAtTheStopFinishesAndWhatTheServerStoredLeavesTheQueue() async throws {
        let uplink = HeldUplink()
        let (sut, queue, _) = try await stopping(uplink)
        let run = Task { await sut.run() }
        #expect(await eventually { uplink.sends == 1 })
        run.cancel()
        uplink.answer(.delivered)
        await run.value
        #expect(queue.items.map(\.sequence) == [2, 3])
        #expect(uplink.sends == 1)
    }

    @Test func anUploadStillUnderWayAfterTheStopGraceIsCancelledAndItsBatchStaysQueued() async throws {
        let uplink = HeldUplink()
        let (sut, queue, clock) = try await stopping(uplink, stopGrace: .seconds(10))
        let ended = Mutex(false)
        let run = Task {
            await sut.run()
            ended.withLock { $0 = true }
        }
        #expect(await eventually { uplink.sends == 1 })
        run.cancel()
        await clock.advance(by: .seconds(9))
        #expect(!(await eventually(within: .milliseconds(50)) { ended.withLock { $0 } }))
        // The grace's sleep may register just after an advance: nudge the clock until it fires.
        #expect(await eventually {
            await clock.advance(by: .seconds(1))
            return ended.withLock { $0 }
        })
        #expect(queue.items.map(\.sequence) == [1, 2, 3])
    }
}

/// An uplink whose sends wait for `answer(_:)`, or for their task's cancellation (then `.retryable`).
private final class HeldUplink: Uplink {
    private let answers: AsyncStream<UplinkResult>
    private let answerer: AsyncStream<UplinkResult>.Continuation
    private let started = Mutex(0)

    init() { (answers, answerer) = AsyncStream.makeStream() }

    var sends: Int { started.withLock { $0 } }
    func answer(_ result: UplinkResult) { answerer.yield(result) }

    func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        started.withLock { $0 += 1 }
        var next = answers.makeAsyncIterator()
        return await next.next() ?? .retryable(reason: "cancelled")
    }
}
