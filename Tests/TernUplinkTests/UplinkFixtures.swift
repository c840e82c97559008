import AsyncHTTPClient
import Foundation
import Logging
import TernCore
import TernSimulation
import TernUplink

/// Fixture builders for the uplink tests.
enum UplinkFixture {
    static let device = "tern-test"
    static let queueID = UUID(uuidString: "0E8C5D2A-7B4F-4C1E-9A3D-5F6B7C8D9E0F") ?? UUID()
    static let quiet = Logger(label: "uplink-test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func batch(_ seqs: ClosedRange<Int64>) -> [QueuedPosition] {
        seqs.map { seq in
            let fix = Fix(
                time: Date(timeIntervalSince1970: 1_795_000_000 + Double(seq)),
                coordinate: Coordinate(latitude: 45.81, longitude: 15.97), altitude: 120.5, speed: 1.25,
                course: 87, quality: .gps, satellites: 9, hdop: 0.9, accuracy: 3.5)
            return QueuedPosition(sequence: seq, position: Position(fix: fix))
        }
    }

    /// Runs `body` with an uplink pointed at a started loopback collector; tears both down.
    static func withCollector(
        timeout: Duration = .seconds(5),
        _ body: (HTTPUplink, Collector) async throws -> Void
    ) async throws {
        let collector = Collector(logger: quiet)
        try await collector.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try UplinkHTTPSettings().clientConfiguration(for: collector.url, environment: [:]))
        let sut = HTTPUplink(
            url: collector.url, device: device, queueID: queueID, httpClient: client, timeout: timeout, logger: quiet)
        do {
            try await body(sut, collector)
        } catch {
            try? await client.shutdown()
            try? await collector.stop()
            throw error
        }
        try await client.shutdown()
        try await collector.stop()
    }
}

extension UplinkResult {
    var isRetryable: Bool { if case .retryable = self { true } else { false } }
    var isPermanent: Bool { if case .permanent = self { true } else { false } }

    var reason: String {
        switch self {
        case .delivered, .partial: ""
        case let .retryable(reason, _), let .permanent(reason), let .rejected(_, reason): reason
        }
    }
}
