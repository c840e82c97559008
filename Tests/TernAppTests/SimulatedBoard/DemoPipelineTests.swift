import Foundation
import Logging
import Testing
import TernApp
import TernCore
import TernStore
import TernTesting

/// A demo run in a new temporary directory: board/simulated.toml as shipped (the built-in copy), only
/// shorter: 20 simulated minutes, long enough for thinning (which may hold a position for 5) to store
/// well over the 5 the tests ask for (10 minutes stored exactly 5 once, on a loaded 2-core CI machine).
private func runDemo(speed: Double, dataDirectory: String? = nil) async throws -> DemoSummary {
    let directory = try dataDirectory ?? temporaryDirectory()
    let options = DemoOptions(duration: .seconds(1200), speed: speed, dataDirectory: directory)
    return try await Demo(options: options, logger: .quiet()).run { _ in }
}

private func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "tern-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The run the tests that only read a summary share: at the demo's own speed (20×, a minute of real
/// time), once. At 60× each of them ran its own and a loaded machine stretched real time enough that
/// in one CI run no upload was tried while the collector was offline.
private actor SharedDemoRun {
    private var run: Task<DemoSummary, any Error>?

    func summary() async throws -> DemoSummary {
        if let run { return try await run.value }
        let task = Task { try await runDemo(speed: DemoOptions().speed) }
        run = task
        return try await task.value
    }
}

private let sharedRun = SharedDemoRun()

/// End to end on the simulated board: simulated GPS → PTY → termios → NMEA → filter → SQLite →
/// HTTP → local collector, with the collector offline for a while and back.
@Suite(
    .timeLimit(.minutes(5)), .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["TERN_DEMO_TESTS"] == "1",
        "runs alone (TERN_DEMO_TESTS=1 swift test --filter DemoPipelineTests; CI does): the simulated board runs 20 times real time, so beside the rest of the suite on 2 cores every delay the load adds is 20 times longer in simulated time (once: the receiver on for over half the time, and a leftover fix judged fresh)"))
struct DemoPipelineTests {
    @Test func everyAcceptedPositionArrivesExactlyOnceInOrderAfterAnOfflinePeriod() async throws {
        let summary = try await sharedRun.summary()
        #expect(summary.enqueued > 5)
        #expect(summary.uploadFailures > 0, "the collector's offline period must have made uploads fail")
        #expect(summary.collectorOfflineSeconds > 60)
        #expect(summary.uploaded >= summary.enqueued)
        #expect(summary.lost == 0)
        // A batch whose answer was lost in the offline switch goes again; the collector drops the repeat by id.
        #expect(summary.duplicatesAtCollector <= summary.uploadFailures)
        #expect(summary.inOrder)
        #expect(summary.queueDepthEnd == 0)
    }

    @Test func everyStoredPositionWasMeasuredAfterItsPowerOnAndWhereTheReceiverWas() async throws {
        let summary = try await sharedRun.summary()
        #expect(summary.audit.checked == summary.enqueued)
        #expect(summary.audit.stale == 0)
        #expect(summary.audit.untrue == 0)
        #expect(summary.audit.faultsPastTheFilter == 0)
        #expect(summary.isClean)
    }

    @Test func theSummaryNamesTheShippedPolicyAndRules() async throws {
        let summary = try await sharedRun.summary()
        let shipped = try TernConfig.parse(SimulatedBoardProfile.text)
        #expect(summary.rules == RulesInForce(shipped))
        #expect(summary.rules?.policy.hasPrefix("adaptive") == true)
        #expect(summary.rules?.filter.contains("warm-up 3s") == true)
        #expect(summary.rules?.store.contains("every 1s or 10 positions") == true)
    }

    @Test func receiverIsPoweredOnlyPartOfTheTime() async throws {
        let summary = try await sharedRun.summary()
        #expect(summary.receiverOnSeconds > 0)
        #expect(summary.receiverOnSeconds < summary.simulatedSeconds * 0.5)
        #expect(summary.powerCycles >= summary.fixesAccepted)
    }

    @Test func positionsLeftQueuedByAnEarlierRunAreDeliveredToo() async throws {
        let directory = try temporaryDirectory()
        let leftovers = (0..<3).map { Position.fixture(seconds: Double($0)) }
        do {
            let queue = try SQLitePositionQueue(path: directory + "/queue.sqlite")
            for position in leftovers { try await queue.enqueue(position) }
        }
        let summary = try await runDemo(speed: 60, dataDirectory: directory)
        #expect(summary.queueDepthEnd == 0)
        #expect(summary.uploaded == summary.enqueued + leftovers.count)
        #expect(summary.duplicatesAtCollector == 0)
    }
}
