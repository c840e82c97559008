import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOPosix
import TernCore
import TernGateway
import TernSimulation
import TernStore
import TernTesting
import TernUplink

/// `tern-bench hostile`: the hostile servers of `HostileServerTests`, `HostileTLSServerTests` and
/// `HostileBrokerTests` as a drill an operator can run on the board itself: Tern's real queue (SQLite
/// in a temporary file), forwarder and uplinks against a loopback server or broker that misbehaves,
/// then behaves. Prints one JSON object per case with the counts; exits 1 if any case deleted a
/// position the server had not stored, or lost one.
struct HostileBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile",
        abstract: "Tern's uplinks against servers that redirect, pose as a captive portal, trickle, flood, lie, never answer, drop, serve a bad certificate; MQTT brokers that never acknowledge, acknowledge another packet, hang up.",
        discussion: """
            Per case: --positions positions queued; the server misbehaves on every request until the \
            forwarder has made 3 attempts or paused; then it behaves until the queue is empty (the \
            certificate cases excepted: a certificate does not mend itself). Reported: what the server \
            stored and what left the queue during the spell (deleted_not_stored must be 0), what arrived \
            afterwards, and the uplink's last error as `tern status` shows it.
            """)

    @Option(help: "Positions queued per case.")
    var positions = 60

    private static let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

    /// One case's counts (JSON in snake case).
    struct Outcome: Codable, Sendable {
        var `case`: String
        var `protocol`: String
        var queued: Int
        /// Positions the server stored, and those that left the queue, while it misbehaved.
        var storedDuringSpell: Int
        var deletedDuringSpell: Int
        /// Left the queue without the server having stored them: must be 0.
        var deletedNotStored: Int
        /// Once the server behaved (nil: the case does not mend, a certificate): what arrived, whether the
        /// queue drained, and what never arrived (must be 0).
        var arrivedAfter: Int?
        var drained: Bool?
        var lost: Int
        var lastError: String

        var isSafe: Bool { deletedNotStored == 0 && lost == 0 }
    }

    struct Report: Codable {
        var benchmark = "hostile"
        var positions: Int
        var cases: [Outcome]
        var allSafe: Bool
        var skipped: String?
    }

    func run() async throws {
        var cases: [Outcome] = []
        let redirects = [
            (301, "https://127.0.0.1/positions"), (302, "http://portal.example/login"), (303, "/elsewhere"),
            (307, "http://other.example/positions"), (308, "/osmand/v2"),
        ]
        let page = "<!DOCTYPE html><html><body><form action=/login>Welcome to the free Wi-Fi</form></body></html>"
        let flood = "{\"pad\":\"" + String(repeating: "x", count: 10 << 20) + "\"}"
        for proto in ["tern", "traccar"] {
            for (status, location) in redirects {
                cases.append(try await http(.answer(status: status, headers: ["Location": location]), proto, "redirect \(status)"))
            }
            cases.append(try await http(.answer(status: 200, headers: ["Content-Type": "text/html"], body: page), proto, "captive portal page"))
            cases.append(try await http(.storeThenAnswer(body: flood), proto, "10 MB answer"))
            cases.append(try await http(.stall, proto, "never answers"))
            cases.append(try await http(.storeThenClose, proto, "proxy drops after storing"))
        }
        cases.append(try await http(.storeThenTrickle(every: .milliseconds(200)), "tern", "answer trickled"))
        cases.append(try await http(.storeThenAnswer(body: #"{"stored_through": 3, "rejected": {"seq": 9999, "reason": "lies"}}"#), "tern", "receipt refusing a position outside the batch"))
        cases.append(try await http(.storeThenAnswer(body: #"{"stored_through": 99999}"#), "tern", "receipt storing beyond the batch"))
        if TestCertificates.isInstalled {
            cases.append(try await tls(names: "DNS:tracker.example.com", days: 2, "certificate for another host"))
            cases.append(try await tls(names: "IP:127.0.0.1,DNS:localhost", days: -1, "expired certificate"))
        }
        for behaviour in ScriptedBroker.Behaviour.allCases where behaviour != .honest {
            cases.append(try await mqtt(behaviour))
        }
        let safe = cases.allSatisfy(\.isSafe)
        let report = Report(
            positions: positions, cases: cases, allSafe: safe,
            skipped: TestCertificates.isInstalled ? nil : "certificate cases: \(TestCertificates.openssl) is missing (apt-get install openssl)")
        let encoder = JSONOutput.encoder(snakeCaseKeys: true)
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
        if !safe { throw ExitCode.failure }
    }

    /// A temporary SQLite queue holding `positions` positions, and its directory.
    private func queue() async throws -> (SQLitePositionQueue, String, [Position]) {
        let directory = NSTemporaryDirectory() + "tern-bench-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try SQLitePositionQueue(path: directory + "/queue.sqlite", options: .init(ballastBytes: 0), logger: Self.quiet)
        let queued = QueueBench.positions(positions)
        _ = try await queue.enqueue(contentsOf: queued)
        return (queue, directory, queued)
    }

    /// Runs the forwarder until it made 3 attempts or paused (the spell), calls `mend`, then runs it
    /// until the queue is empty (at most 60 s) unless `mends` is false; the counts.
    private func drill(
        _ label: String, _ proto: String, queue: SQLitePositionQueue, all: [Position], uplink: any Uplink,
        key: @escaping @Sendable (Position) -> String, stored: @escaping @Sendable () async -> Set<String>, mends: Bool = true,
        mend: @escaping @Sendable () async -> Void
    ) async -> Outcome {
        let forwarder = Forwarder(
            queue: queue, uplink: uplink, backoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(200), jitter: 0.5),
            batchSize: 20, clock: ContinuousClock(), logger: Self.quiet)
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await forwarder.run(); return nil }
            _ = await eventually(within: .seconds(60)) {
                let status = forwarder.status()
                return status.failedAttempts + status.batchesSent >= 3 || status.blockedReason != nil
            }
            let status = forwarder.status()
            let kept = Set(((try? await queue.oldest(limit: all.count)) ?? []).map { key($0.position) })
            let storedDuring = await stored()
            await mend()
            var drained = false
            if mends { drained = await eventually(within: .seconds(60)) { (try? await queue.count()) == 0 } }
            group.cancelAll()
            let ids = Set(all.map(key))
            let deleted = ids.subtracting(kept)
            let arrived = await stored()
            return Outcome(
                case: label, protocol: proto, queued: all.count, storedDuringSpell: storedDuring.count,
                deletedDuringSpell: deleted.count, deletedNotStored: deleted.subtracting(storedDuring).count,
                arrivedAfter: mends ? arrived.intersection(ids).count : nil, drained: mends ? drained : nil,
                lost: mends ? ids.subtracting(arrived).count : ids.subtracting(kept).subtracting(arrived).count,
                lastError: status.blockedReason ?? status.lastError ?? "")
        }
    }

    private func http(_ fault: CollectorFault, _ proto: String, _ label: String) async throws -> Outcome {
        let collector = Collector(logger: Self.quiet)
        try await collector.start()
        let (queue, directory, all) = try await queue()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = UplinkHTTPSettings(connectTimeout: .seconds(1), readTimeout: .milliseconds(800))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try settings.clientConfiguration(for: collector.url, environment: [:]))
        let uplink = try Self.uplink(proto, collector: collector, queue: queue, client: client)
        collector.injectFaults(fault, rate: 1)
        let result = await drill(
            label, proto, queue: queue, all: all, uplink: uplink, key: Self.timeKey, stored: { await Self.times(collector) },
            mend: { collector.injectFaults(nil, rate: 0) })
        try await client.shutdown()
        try await collector.stop()
        return result
    }

    private func tls(names: String, days: Int, _ label: String) async throws -> Outcome {
        let (queue, directory, all) = try await queue()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificates = URL(filePath: directory).appending(path: "tls")
        try FileManager.default.createDirectory(at: certificates, withIntermediateDirectories: true)
        try await TestCertificates.make(in: certificates, names: names, days: days)
        let context = try Collector.tlsContext(
            certificateFile: certificates.appending(path: "server.pem").path, keyFile: certificates.appending(path: "server.key").path)
        let collector = Collector(tls: context, logger: Self.quiet)
        try await collector.start()
        let settings = UplinkHTTPSettings(connectTimeout: .seconds(1), readTimeout: .seconds(1), caFile: certificates.appending(path: "ca.pem").path)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try settings.clientConfiguration(for: collector.url, environment: [:]))
        let uplink = try Self.uplink("tern", collector: collector, queue: queue, client: client)
        let result = await drill(
            label, "tern (https)", queue: queue, all: all, uplink: uplink, key: Self.timeKey, stored: { await Self.times(collector) }, mends: false, mend: {})
        try await client.shutdown()
        try await collector.stop()
        return result
    }

    private func mqtt(_ behaviour: ScriptedBroker.Behaviour) async throws -> Outcome {
        let broker = ScriptedBroker(behaviour)
        try await broker.start()
        let (queue, directory, all) = try await queue()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let uplink = try MQTTUplink(
            url: broker.url, device: "tern-bench", topic: "owntracks/bench/tern-bench", username: nil, password: nil, caFile: nil,
            trackerID: nil, timeout: .seconds(2), group: MultiThreadedEventLoopGroup.singleton, logger: Self.quiet,
            tuning: .init(keepAlive: .seconds(10), window: 4, connectTimeout: .seconds(1), responseTimeout: .milliseconds(400)))
        let result = await drill(
            "broker \(behaviour.rawValue)", "mqtt", queue: queue, all: all, uplink: uplink, key: { $0.id.uuidString }, stored: { Set(broker.stored) },
            mend: { broker.behaviour = .honest })
        await uplink.shutdown()
        await broker.stop()
        return result
    }

    private static func uplink(_ proto: String, collector: Collector, queue: SQLitePositionQueue, client: HTTPClient) throws -> any Uplink {
        if proto == "tern" {
            return HTTPUplink(url: collector.url, device: "tern-bench", queueID: queue.queueID, httpClient: client, timeout: .seconds(1), logger: quiet)
        }
        guard let url = URL(string: "http://127.0.0.1:\(collector.port)/osmand") else { throw ValidationError("no OsmAnd URL") }
        return TraccarUplink(url: url, device: "tern-bench", httpClient: client, timeout: .seconds(1), logger: quiet)
    }

    /// A position by its fix time: OsmAnd carries no id, and the collector dedups it by device and time.
    private static let timeKey: @Sendable (Position) -> String = { "\($0.fix.time.timeIntervalSince1970)" }

    /// What the collector stored, by fix time.
    private static func times(_ collector: Collector) async -> Set<String> {
        Set(await collector.snapshot().unique.map { "\($0.time.timeIntervalSince1970)" })
    }
}
