import Foundation
import Logging
import Testing
import TernApp
import TernCore
import TernStore
import TernTesting

/// End to end on the simulated board: simulated GPS → PTY → termios → NMEA → filter → SQLite →
/// HTTP → local collector, with the collector offline for a while and back.
@Suite(.timeLimit(.minutes(5)), .serialized) struct DemoPipelineTests {
    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "tern-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func runDemo(dataDirectory: String) async throws -> DemoSummary {
        // board/simulated.toml as shipped (the built-in copy), only shorter and faster: 20 minutes, long
        // enough for thinning (which may hold a position for 5) to store well over the 5 the tests ask
        // for (10 minutes stored exactly 5 once, on a loaded 2-core CI machine).
        let options = DemoOptions(duration: .seconds(1200), speed: 60, dataDirectory: dataDirectory)
        return try await Demo(options: options, logger: .quiet()).run { _ in }
    }

    @Test func everyAcceptedPositionArrivesExactlyOnceInOrderAfterAnOfflinePeriod() async throws {
        let summary = try await runDemo(dataDirectory: try temporaryDirectory())
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
        let summary = try await runDemo(dataDirectory: try temporaryDirectory())
        #expect(summary.audit.checked == summary.enqueued)
        #expect(summary.audit.stale == 0)
        #expect(summary.audit.untrue == 0)
        #expect(summary.isClean)
    }

    @Test func theSummaryNamesTheShippedPolicyAndRules() async throws {
        let summary = try await runDemo(dataDirectory: try temporaryDirectory())
        let shipped = try TernConfig.parse(SimulatedBoardProfile.text)
        #expect(summary.rules == RulesInForce(shipped))
        #expect(summary.rules?.policy.hasPrefix("adaptive") == true)
        #expect(summary.rules?.filter.contains("warm-up 3s") == true)
        #expect(summary.rules?.store.contains("every 1s or 10 positions") == true)
    }

    @Test func receiverIsPoweredOnlyPartOfTheTime() async throws {
        let summary = try await runDemo(dataDirectory: try temporaryDirectory())
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
        let summary = try await runDemo(dataDirectory: directory)
        #expect(summary.queueDepthEnd == 0)
        #expect(summary.uploaded == summary.enqueued + leftovers.count)
        #expect(summary.duplicatesAtCollector == 0)
    }
}
