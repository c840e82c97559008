import AsyncHTTPClient
import Foundation
import Testing
import TernCore
import TernGateway
import TernSimulation
import TernTesting
@testable import TernUplink

extension HostilePeers {
    /// The forwarder and Tern's HTTP uplink against an https server whose certificate is for another
    /// host or expired (issue 31), over real sockets and real TLS, trusting the test CA as
    /// `uplink.ca_file` would: nothing leaves the queue, the uplink pauses naming the fix. Each case
    /// prints its counts.
    @Suite(.timeLimit(.minutes(2)), .serialized, .enabled(if: TestCertificates.isInstalled, "needs /usr/bin/openssl (Debian's openssl)"))
    struct HostileTLSServerTests {
        struct Meeting {
            var queued: Int
            var stored: Int
            var kept: Int
            var status: ForwarderStatus
        }

        /// Queues `count` positions and forwards them to an https collector whose certificate names
        /// `names` and is valid for `days`, until the forwarder pauses or has sent every batch.
        private func meet(names: String, days: Int, count: Int = 40, label: String) async throws -> Meeting {
            let directory = FileManager.default.temporaryDirectory.appending(path: "tern-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try await TestCertificates.make(in: directory, names: names, days: days)
            let tls = try Collector.tlsContext(
                certificateFile: directory.appending(path: "server.pem").path, keyFile: directory.appending(path: "server.key").path)
            let collector = Collector(tls: tls, logger: UplinkFixture.quiet)
            try await collector.start()
            let settings = UplinkHTTPSettings(connectTimeout: .seconds(2), readTimeout: .seconds(2), caFile: directory.appending(path: "ca.pem").path)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try settings.clientConfiguration(for: collector.url, environment: [:]))
            let queue = InMemoryPositionQueue()
            for queued in UplinkFixture.batch(1...Int64(count)) { _ = try await queue.enqueue(queued.position) }
            let uplink = HTTPUplink(
                url: collector.url, device: "tern-test", queueID: queue.queueID, httpClient: client, timeout: .seconds(3), logger: UplinkFixture.quiet)
            let sut = Forwarder(
                queue: queue, uplink: uplink, backoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(100), jitter: 0.5),
                batchSize: 10, clock: ContinuousClock(), logger: UplinkFixture.quiet)
            let status = await withTaskGroup(of: ForwarderStatus?.self) { group in
                group.addTask { await sut.run(); return nil }
                _ = await eventually(within: .seconds(30)) {
                    if sut.status().blockedReason != nil { return true }
                    return (try? await queue.count()) == 0
                }
                let status = sut.status()
                group.cancelAll()
                return status
            }
            let meeting = Meeting(
                queued: count, stored: await collector.snapshot().unique.count, kept: try await queue.count(), status: status)
            try await client.shutdown()
            try await collector.stop()
            print(
                "hostile TLS server \(label): \(meeting.queued) queued, the server stored \(meeting.stored), the queue kept "
                    + "\(meeting.kept); \(meeting.status.blockedReason ?? meeting.status.lastError ?? "no error")")
            return meeting
        }

        @Test func aCertificateSignedByTheConfiguredCAForThisHostDeliversEverything() async throws {
            let meeting = try await meet(names: "IP:127.0.0.1,DNS:localhost", days: 2, label: "valid certificate")

            #expect(meeting.stored == meeting.queued)
            #expect(meeting.kept == 0)
        }

        @Test func aCertificateForAnotherHostDeletesNothingAndPausesNamingTheHost() async throws {
            let meeting = try await meet(names: "DNS:tracker.example.com", days: 2, label: "certificate for another host")

            #expect(meeting.stored == 0)
            #expect(meeting.kept == meeting.queued)
            let reason = try #require(meeting.status.blockedReason)
            #expect(reason.contains("TLS certificate of 127.0.0.1"), "\(reason)")
        }

        @Test func anExpiredCertificateDeletesNothingAndPausesNamingTheClockAndTheCA() async throws {
            let meeting = try await meet(names: "IP:127.0.0.1,DNS:localhost", days: -1, label: "expired certificate")

            #expect(meeting.stored == 0)
            #expect(meeting.kept == meeting.queued)
            let reason = try #require(meeting.status.blockedReason)
            #expect(reason.contains("clock") && reason.contains("uplink.ca_file"), "\(reason)")
        }
    }
}
