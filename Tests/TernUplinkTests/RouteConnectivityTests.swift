import Foundation
import Testing
import TernCore
import TernUplink

@Suite(.timeLimit(.minutes(1))) struct RouteConnectivityTests {
    /// Temporary route files the test can rewrite while the connectivity polls them.
    struct RouteFiles {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-route-\(UUID().uuidString)")
        var ipv4: URL { directory.appendingPathComponent("route") }
        var ipv6: URL { directory.appendingPathComponent("ipv6_route") }

        func write(defaultRoute: Bool) throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let lines = defaultRoute ? [RouteSample.ipv4Header, RouteSample.ipv4Default] : [RouteSample.ipv4Header]
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: ipv4)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    private func makeSUT(_ files: RouteFiles) -> RouteConnectivity {
        RouteConnectivity(interval: .milliseconds(10), ipv4Path: files.ipv4.path, ipv6Path: files.ipv6.path)
    }

    @Test func firstEventReflectsTheCurrentState() async throws {
        let files = RouteFiles()
        defer { files.remove() }
        try files.write(defaultRoute: true)
        var events = makeSUT(files).events().makeAsyncIterator()

        #expect(await events.next() == .mayBeOnline)
    }

    @Test func missingRouteFilesMeanOffline() async throws {
        let files = RouteFiles()
        var events = makeSUT(files).events().makeAsyncIterator()

        #expect(await events.next() == .offline)
    }

    @Test func emitsWhenTheDefaultRouteAppearsAndDisappears() async throws {
        let files = RouteFiles()
        defer { files.remove() }
        try files.write(defaultRoute: false)
        var events = makeSUT(files).events().makeAsyncIterator()
        #expect(await events.next() == .offline)

        try files.write(defaultRoute: true)
        #expect(await events.next() == .mayBeOnline)

        try files.write(defaultRoute: false)
        #expect(await events.next() == .offline)
    }
}
