import Foundation
import Testing
import TernTesting

/// The connectivity monitor in a network namespace of its own, through `tern connectivity`: a default
/// route appearing is a hint to retry at once; a link going down (Linux then drops the IPv4 default
/// route without a route message) is seen as offline.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ConnectivityNamespaceTests {
    static let binary = TernExecutable.url

    @Test(.enabled(if: binary != nil && NetworkNamespace.canCreate, "needs the tern executable, root and ip netns"))
    func aLinkGoingDownIsOfflineAndComingBackWithARouteIsAHintToRetry() async throws {
        let ns = NetworkNamespace(index: 1)
        try #require(ns.created)
        let (tool, arguments) = ns.wrap([try #require(Self.binary).path, "connectivity", "--count", "4"])
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        try await Task.sleep(for: .milliseconds(500))
        ns.setLink(up: true)
        try await Task.sleep(for: .milliseconds(500))
        ns.setLink(up: false)
        try await Task.sleep(for: .milliseconds(500))
        ns.setLink(up: true)
        let done = await eventually(within: .seconds(10)) { !process.isRunning }
        if !done { process.terminate() }
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map { $0.split(separator: " ").dropFirst().joined(separator: " ") }
        #expect(lines == ["offline", "may be online", "offline", "may be online"])
    }
}
