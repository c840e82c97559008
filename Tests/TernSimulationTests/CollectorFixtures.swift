import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import TernCore
import TernSimulation

/// Fixture builders and a tiny HTTP client for the collector tests.
enum CollectorFixture {
    static func batch(seqs: ClosedRange<Int64>, device: String = "tern-test") -> WireBatch {
        WireBatch(device: device, queued: seqs.map(queued))
    }

    static func queued(_ seq: Int64) -> QueuedPosition {
        let fix = Fix(
            time: Date(timeIntervalSince1970: 1_795_000_000 + Double(seq)),
            coordinate: Coordinate(latitude: 45.81, longitude: 15.97), quality: .gps)
        return QueuedPosition(sequence: seq, position: Position(fix: fix))
    }

    /// Runs `body` with a collector started on a free loopback port, and stops it afterwards.
    static func withStartedCollector(_ body: (Collector) async throws -> Void) async throws {
        let collector = Collector(logger: Logger(label: "collector-test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await collector.start()
        do {
            try await body(collector)
        } catch {
            try await collector.stop()
            throw error
        }
        try await collector.stop()
    }

    /// POSTs `body` to `url` and returns the status and body.
    static func post(_ body: Data, to url: URL) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, String(decoding: data, as: UTF8.self))
    }

    static func post(_ batch: WireBatch, to url: URL) async throws -> (status: Int, body: String) {
        try await post(WireBatch.encoder().encode(batch), to: url)
    }
}
