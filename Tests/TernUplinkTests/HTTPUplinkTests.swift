import Foundation
import Testing
import TernCore
import TernSimulation
@testable import TernUplink

@Suite(.timeLimit(.minutes(1))) struct HTTPUplinkTests {
    @Test func acceptedBatchIsDelivered() async throws {
        try await UplinkFixture.withCollector { sut, _ in
            #expect(await sut.send(UplinkFixture.batch(1...3)) == .delivered)
        }
    }

    @Test func postedBodyDecodesToTheBatchWithIdsAndSeqs() async throws {
        try await UplinkFixture.withCollector { sut, collector in
            let batch = UplinkFixture.batch(1...3)

            _ = await sut.send(batch)

            let expected = WireBatch(device: UplinkFixture.device, queued: batch).positions
            #expect(await collector.snapshot().unique == expected)
        }
    }

    @Test func serviceUnavailableIsRetryable() async throws {
        try await UplinkFixture.withCollector { sut, collector in
            await collector.setFailureStatus(503)

            let result = await sut.send(UplinkFixture.batch(1...1))

            #expect(result.isRetryable)
            #expect(result.reason.contains("503"))
        }
    }

    @Test func badRequestIsPermanent() async throws {
        try await UplinkFixture.withCollector { sut, collector in
            await collector.setFailureStatus(400)

            let result = await sut.send(UplinkFixture.batch(1...1))

            #expect(result.isPermanent)
            #expect(result.reason.contains("400"))
        }
    }

    @Test func refusedConnectionIsRetryable() async throws {
        try await UplinkFixture.withCollector { sut, collector in
            try await collector.goOffline()

            let result = await sut.send(UplinkFixture.batch(1...1))

            #expect(result.isRetryable)
            // Refused; or reset, when another test's server took the freed port meanwhile.
            #expect(result.reason.contains("refused") || result.reason.contains("reset"), "\(result.reason)")
        }
    }

    @Test func collectorGoingOfflineDropsThePooledConnection() async throws {
        try await UplinkFixture.withCollector { sut, collector in
            _ = await sut.send(UplinkFixture.batch(1...1))
            try await collector.goOffline()

            let result = await sut.send(UplinkFixture.batch(2...2))

            #expect(result.isRetryable)
            #expect(await collector.snapshot().unique.map(\.seq) == [1])
        }
    }

    @Test func serverSlowerThanTheTimeoutIsRetryable() async throws {
        try await UplinkFixture.withCollector(timeout: .milliseconds(300)) { sut, collector in
            await collector.setResponseDelay(.seconds(3))

            let result = await sut.send(UplinkFixture.batch(1...1))

            #expect(result.isRetryable)
            #expect(result.reason.contains("timed out"))
        }
    }

    @Test func emptyBatchIsDeliveredWithoutARequest() async throws {
        try await UplinkFixture.withCollector { sut, collector in
            #expect(await sut.send([]) == .delivered)
            #expect(await collector.snapshot().requests == 0)
        }
    }
}
