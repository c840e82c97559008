import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import Testing
import TernMetrics

@Suite(.timeLimit(.minutes(1))) struct MetricsHTTPServerTests {
    /// Runs a server rendering `text` (counting scrapes) on a free loopback port while `body` runs.
    private func withServer(
        _ text: String, _ body: (URL, @Sendable () -> Int) async throws -> Void
    ) async throws {
        let scrapes = Mutex(0)
        let sut = MetricsHTTPServer(host: "127.0.0.1", port: 0, logger: Logger(label: "test")) {
            scrapes.withLock { $0 += 1 }
            return text
        }
        let port = try await sut.start()
        try await withThrowingTaskGroup { group in
            group.addTask { try await sut.run() }
            let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
            try await body(base, { scrapes.withLock { $0 } })
            group.cancelAll()
        }
    }

    @Test func servesTheMetricsRenderedAtTheScrape() async throws {
        try await withServer("tern_queue_depth 3\n") { base, scrapes in
            let (data, response) = try await URLSession.shared.data(from: base.appending(path: "metrics"))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 200)
            #expect(http.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(String(decoding: data, as: UTF8.self) == "tern_queue_depth 3\n")
            #expect(scrapes() == 1)
        }
    }

    @Test func otherPathsAreNotFound() async throws {
        try await withServer("x 1\n") { base, scrapes in
            let (_, response) = try await URLSession.shared.data(from: base.appending(path: "positions"))
            #expect((response as? HTTPURLResponse)?.statusCode == 404)
            #expect(scrapes() == 0)
        }
    }

    @Test func aPortInUseIsAnErrorNamingTheKey() async throws {
        let first = MetricsHTTPServer(host: "127.0.0.1", port: 0, logger: Logger(label: "test")) { "" }
        let port = try await first.start()
        let sut = MetricsHTTPServer(host: "127.0.0.1", port: port, logger: Logger(label: "test")) { "" }
        do {
            try await sut.start()
            Issue.record("a second server bound port \(port)")
        } catch {
            #expect(error.description.contains("metrics.listen"))
        }
        await withThrowingTaskGroup { group in
            group.addTask { try await first.run() }
            group.cancelAll()
        }
    }
}
