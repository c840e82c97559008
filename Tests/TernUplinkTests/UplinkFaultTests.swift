import AsyncHTTPClient
import Foundation
import Testing
import TernCore
import TernGateway
import TernSimulation
import TernTesting
@testable import TernUplink

/// The forwarder and each HTTP uplink against a server that misbehaves (500, 503 and 429 with
/// Retry-After, connections closed without an answer, answers cut mid-body, slow and stalled
/// answers, random faults): every queued position arrives exactly once after dedupe, in order.
@Suite(.timeLimit(.minutes(3))) struct UplinkFaultTests {
    enum Wire: String, CaseIterable, Sendable { case tern, traccar }

    /// Queues `count` positions, forwards them through `protocol` to a collector meeting `faults`
    /// (scripted first, then `rate` random ones), and returns what arrived once the queue is empty.
    private func deliver(
        _ count: Int, _ proto: Wire, faults: [CollectorFault], random: CollectorFault? = nil, rate: Double = 0,
        malformed: Int64? = nil
    ) async throws -> (snapshot: CollectorSnapshot, queued: [QueuedPosition], left: Int, status: ForwarderStatus) {
        let collector = Collector(logger: UplinkFixture.quiet)
        try await collector.start()
        let settings = UplinkHTTPSettings(connectTimeout: .seconds(1), readTimeout: .milliseconds(500))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try settings.clientConfiguration(for: collector.url))
        let queue = InMemoryPositionQueue()
        var positions = UplinkFixture.batch(1...Int64(count))
        if let malformed { positions[Int(malformed) - 1].position.fix.coordinate.latitude = 95 }
        for queued in positions { try await queue.enqueue(queued.position) }
        let uplink: any Uplink =
            switch proto {
            case .tern:
                HTTPUplink(url: collector.url, device: "tern-test", queueID: UplinkFixture.queueID, httpClient: client, timeout: .seconds(2), logger: UplinkFixture.quiet)
            case .traccar:
                TraccarUplink(
                    url: URL(string: "http://127.0.0.1:\(collector.port)/osmand")!, device: "tern-test", httpClient: client,
                    timeout: .seconds(2), logger: UplinkFixture.quiet)
            }
        collector.script(faults)
        collector.injectFaults(random, rate: rate, seed: 7)
        let sut = Forwarder(
            queue: queue, uplink: uplink, backoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(100), jitter: 0.5),
            batchSize: 50, clock: ContinuousClock(), logger: UplinkFixture.quiet)
        let drained = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await sut.run(); return false }
            // A bound on liveness, not a speed claim: 200 Traccar requests with a quarter failing took
            // over 30 s on a loaded 2-core CI machine (the suite's limit is 3 minutes).
            let drained = await eventually(within: .seconds(120)) { (try? await queue.count()) == 0 }
            group.cancelAll()
            return drained
        }
        #expect(drained, "the queue did not drain")
        let snapshot = await collector.snapshot()
        let left = try await queue.count()
        try await client.shutdown()
        try await collector.stop()
        return (snapshot, positions, left, sut.status())
    }

    private func expectEveryPositionOnceInOrder(_ result: (snapshot: CollectorSnapshot, queued: [QueuedPosition], left: Int, status: ForwarderStatus)) {
        #expect(result.left == 0)
        #expect(result.snapshot.unique.map(\.time) == result.queued.map(\.position.fix.time))
    }

    @Test(arguments: Wire.allCases)
    func serverErrorsAndRetryAfterOnlyDelay(_ proto: Wire) async throws {
        let result = try await deliver(
            120, proto, faults: [.status(500), .status(503, retryAfter: "0"), .status(429, retryAfter: "0"), .status(502)])
        expectEveryPositionOnceInOrder(result)
        #expect(result.status.failedAttempts >= 4)
    }

    @Test(arguments: Wire.allCases)
    func answersCutMidBodySlowOrStalledAreRetriedWithoutLoss(_ proto: Wire) async throws {
        let result = try await deliver(120, proto, faults: [.closeMidBody, .slow(.milliseconds(200)), .stall, .closeMidBody])
        expectEveryPositionOnceInOrder(result)
    }

    @Test(arguments: Wire.allCases)
    func aQuarterOfRequestsFailingAtRandomStillDeliversEverything(_ proto: Wire) async throws {
        let result = try await deliver(200, proto, faults: [], random: .status(503), rate: 0.25)
        expectEveryPositionOnceInOrder(result)
    }

    @Test func ternConnectionsClosedWithoutAnAnswerAreRetried() async throws {
        let result = try await deliver(100, .tern, faults: [.closeWithoutAnswer, .closeWithoutAnswer, .closeWithoutAnswer])
        expectEveryPositionOnceInOrder(result)
        #expect(result.status.quarantined == 0)
    }

    @Test func traccarResettingEveryConnectionForAWhileQuarantinesNothing() async throws {
        let result = try await deliver(60, .traccar, faults: Array(repeating: .closeWithoutAnswer, count: 12))
        expectEveryPositionOnceInOrder(result)
        #expect(result.status.quarantined == 0)
    }

    @Test func aRecordTraccarCannotDecodeIsQuarantinedAndTheRestArrivesInOrder() async throws {
        let result = try await deliver(60, .traccar, faults: [], malformed: 25)
        #expect(result.left == 0)
        #expect(result.status.quarantined == 1)
        let expected = result.queued.filter { $0.sequence != 25 }.map(\.position.fix.time)
        #expect(result.snapshot.unique.map(\.time).filter { expected.contains($0) } == expected)
        #expect(!result.snapshot.unique.map(\.time).contains(result.queued[24].position.fix.time))
    }
}
