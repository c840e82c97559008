import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import Testing
import TernTesting
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

    /// A TCP connection to the loopback `port` that sends nothing.
    private func idleConnection(to port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        return fd
    }

    /// Whether the server closes `fd` within `limit` (a read returns end of file). The blocking read
    /// runs on a thread of its own: on one of the tests' few cooperative threads it would stall the
    /// server under test, and every other test, for up to `limit`.
    private func closedByServer(_ fd: Int32, within limit: Duration) async -> Bool {
        (try? await TernExecutable.offload { Self.readsEndOfFile(fd, within: limit) }) ?? false
    }

    /// Whether the server has not closed `fd` yet (nothing to read, no end of file), without waiting.
    private static func isOpen(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    private static func readsEndOfFile(_ fd: Int32, within limit: Duration) -> Bool {
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: Int(limit.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    @Test func connectionsBeyondTheCapAreClosedAtOnceAndIdleOnesAtTheDeadline() async throws {
        let sut = MetricsHTTPServer(
            host: "127.0.0.1", port: 0, maxConnections: 2, connectionDeadline: .seconds(5), logger: Logger(label: "test")) { "x 1\n" }
        let port = try await sut.start()
        try await withThrowingTaskGroup { group in
            group.addTask { try await sut.run() }
            let idle = try [idleConnection(to: port), idleConnection(to: port)]
            defer { idle.forEach { close($0) } }
            try await Task.sleep(for: .milliseconds(200))  // both admitted
            let third = try idleConnection(to: port)
            defer { close(third) }
            // Closed for the cap, not by the deadline: while the two idle ones, opened before it, are
            // still open (told by order, not by a time window a loaded machine could stretch).
            #expect(await closedByServer(third, within: .seconds(10)), "a connection beyond the cap stayed open")
            for fd in idle { #expect(Self.isOpen(fd), "the connection beyond the cap was closed no sooner than the idle ones: by the deadline, not the cap") }
            for fd in idle { #expect(await closedByServer(fd, within: .seconds(8)), "an idle connection outlived the deadline") }
            let (data, _) = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(port)/metrics")))
            #expect(String(decoding: data, as: UTF8.self) == "x 1\n", "a scrape after the idle connections were closed")
            group.cancelAll()
        }
    }
}
