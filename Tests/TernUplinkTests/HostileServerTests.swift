import AsyncHTTPClient
import Foundation
import Testing
import TernCore
import TernGateway
import TernSimulation
import TernTesting
@testable import TernUplink

extension HostilePeers {
    /// The forwarder and each HTTP uplink against servers that redirect, pose as a captive portal,
    /// trickle, flood, lie in their receipts, never answer or drop the connection after storing (issue
    /// 31), over real sockets. While the server misbehaves, nothing the server did not store leaves the
    /// queue; once it behaves, every position arrives, once. Each case prints its counts.
    @Suite(.timeLimit(.minutes(5)), .serialized) struct HostileServerTests {
        enum Wire: String, CaseIterable, Sendable { case tern, traccar }

        struct Meeting {
            /// Positions at the server (distinct) and left in the queue after the hostile spell.
            var stored: Set<Date>
            var kept: Set<Date>
            var all: [Date]
            /// The forwarder's status at the end of the spell.
            var status: ForwarderStatus
            /// Whether the queue drained once the server behaved, and what arrived in all.
            var drained: Bool
            var arrived: [Date]
        }

        /// Queues `count` positions, forwards them through `proto` to a collector meeting `fault` on every
        /// request until the forwarder has finished `attempts` uploads (failed or not) or paused, then lets
        /// the server behave until the queue is empty.
        private func meet(
            _ fault: CollectorFault, _ proto: Wire, count: Int = 120, attempts: Int = 3, timeout: Duration = .seconds(1), label: String
        ) async throws -> Meeting {
            let collector = Collector(logger: UplinkFixture.quiet)
            try await collector.start()
            let settings = UplinkHTTPSettings(connectTimeout: .seconds(1), readTimeout: .milliseconds(800))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try settings.clientConfiguration(for: collector.url, environment: [:]))
            let queue = InMemoryPositionQueue()
            let positions = UplinkFixture.batch(1...Int64(count))
            for queued in positions { _ = try await queue.enqueue(queued.position) }
            let uplink: any Uplink =
                switch proto {
                case .tern:
                    HTTPUplink(url: collector.url, device: "tern-test", queueID: queue.queueID, httpClient: client, timeout: timeout, logger: UplinkFixture.quiet)
                case .traccar:
                    TraccarUplink(
                        url: try #require(URL(string: "http://127.0.0.1:\(collector.port)/osmand")), device: "tern-test", httpClient: client,
                        timeout: timeout, logger: UplinkFixture.quiet)
                }
            collector.injectFaults(fault, rate: 1)
            let sut = Forwarder(
                queue: queue, uplink: uplink, backoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(100), jitter: 0.5),
                batchSize: 50, clock: ContinuousClock(), logger: UplinkFixture.quiet)
            let meeting = try await withThrowingTaskGroup(of: Meeting?.self) { group in
                group.addTask { await sut.run(); return nil }
                let met = await eventually(within: .seconds(60)) {
                    let status = sut.status()
                    return status.failedAttempts + status.batchesSent >= attempts || status.blockedReason != nil
                }
                #expect(met, "the forwarder never finished an upload against the hostile server")
                let stored = Set(await collector.snapshot().unique.map(\.time))
                let kept = Set(try await queue.oldest(limit: count).map(\.position.fix.time))
                let status = sut.status()
                collector.injectFaults(nil, rate: 0)
                let drained = await eventually(within: .seconds(60)) { (try? await queue.count()) == 0 }
                group.cancelAll()
                let arrived = await collector.snapshot().unique.map(\.time)
                return Meeting(
                    stored: stored, kept: kept, all: positions.map(\.position.fix.time), status: status, drained: drained, arrived: arrived)
            }
            try await client.shutdown()
            try await collector.stop()
            let result = meeting
            print(
                "hostile server \(label) (\(proto.rawValue)): \(result.all.count) queued; during the spell the server stored "
                    + "\(result.stored.count), the queue kept \(result.kept.count), deleted \(result.all.count - result.kept.count); "
                    + "afterwards \(result.arrived.count) arrived once each; last error: \(result.status.blockedReason ?? result.status.lastError ?? "none")")
            return result
        }

        /// Nothing left the queue that the server had not stored; nothing lost; all arrived once after.
        private func expectNothingCountedThatWasNotStored(_ meeting: Meeting) {
            let deleted = Set(meeting.all).subtracting(meeting.kept)
            #expect(deleted.isSubset(of: meeting.stored), "positions deleted from the queue that the server never stored")
            #expect(meeting.drained, "the queue did not drain once the server behaved")
            #expect(meeting.arrived == meeting.all, "every position once, in order, once the server behaved")
        }

        static let redirects: [(Int, String)] = [
            (301, "https://127.0.0.1/positions"), (302, "http://portal.example/login?continue=1"), (303, "/elsewhere"),
            (307, "http://other.example/positions"), (308, "/osmand/v2"),
        ]

        @Test(arguments: Wire.allCases, redirects.indices)
        func aRedirectDeletesNothingAndPausesTheUplinkNamingItsTarget(_ proto: Wire, _ index: Int) async throws {
            let (status, location) = Self.redirects[index]
            let meeting = try await meet(.answer(status: status, headers: ["Location": location]), proto, label: "redirect \(status)")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.stored.isEmpty)
            let reason = try #require(meeting.status.blockedReason)
            #expect(reason.contains("redirects to") && reason.contains(location.hasPrefix("/") ? location : String(location.prefix(20))))
        }

        @Test(arguments: Wire.allCases)
        func aCaptivePortalsPageDeletesNothing(_ proto: Wire) async throws {
            let page = "<!DOCTYPE html><html><body><form action=/login>Welcome to the free Wi-Fi</form></body></html>"
            let meeting = try await meet(
                .answer(status: 200, headers: ["Content-Type": "text/html; charset=utf-8"], body: page), proto, label: "captive portal")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.kept.count == meeting.all.count)
            #expect(meeting.status.lastError?.contains("captive portal") == true)
        }

        /// A byte every 200 ms never trips the read timeout (800 ms of silence): only the deadline on
        /// the whole answer (1 s) ends it.
        @Test func anAnswerTrickledTooFastForTheReadTimeoutIsGivenUpAtTheDeadline() async throws {
            let meeting = try await meet(.storeThenTrickle(every: .milliseconds(200)), .tern, label: "trickle")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.status.lastError?.contains("did not finish its answer") == true, "\(meeting.status.lastError ?? "")")
        }

        @Test(arguments: Wire.allCases)
        func aTenMegabyteAnswerIsReadOnlyInPartAndDeletesNothing(_ proto: Wire) async throws {
            let flood = "{\"accepted\":1,\"pad\":\"" + String(repeating: "x", count: 10 << 20) + "\"}"
            let meeting = try await meet(.storeThenAnswer(body: flood), proto, label: "10 MB answer")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.kept.count == meeting.all.count)
        }

        @Test func aReceiptRefusingAPositionOutsideTheBatchIsNotBelieved() async throws {
            let meeting = try await meet(
                .storeThenAnswer(body: #"{"stored_through": 3, "rejected": {"seq": 9999, "reason": "lies"}}"#), .tern, label: "receipt refusing seq 9999")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.status.quarantined == 0)
            #expect(meeting.status.lastError?.contains("not believed") == true)
        }

        @Test func aReceiptStoredThroughBeyondTheBatchAcknowledgesOnlyTheBatch() async throws {
            let meeting = try await meet(.storeThenAnswer(body: #"{"stored_through": 99999}"#), .tern, label: "stored_through 99999")
            expectNothingCountedThatWasNotStored(meeting)
        }

        @Test(arguments: Wire.allCases)
        func aServerThatNeverAnswersDeletesNothing(_ proto: Wire) async throws {
            let meeting = try await meet(.stall, proto, attempts: 2, label: "never answers")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.stored.isEmpty)
        }

        @Test(arguments: Wire.allCases)
        func aProxyDroppingTheConnectionAfterTheServerStoredLosesNothing(_ proto: Wire) async throws {
            let meeting = try await meet(.storeThenClose, proto, label: "dropped after storing")
            expectNothingCountedThatWasNotStored(meeting)
            #expect(meeting.kept.count == meeting.all.count)
        }
    }
}
