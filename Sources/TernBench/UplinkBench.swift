import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import TernCore
import TernGateway
import TernSimulation
import TernStore
import TernTesting
import TernUplink

/// `tern-bench uplink`: how fast a backlog drains, and how soon uploads resume when a link comes back.
struct UplinkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uplink",
        abstract: "Drain a queued backlog to a loopback receiver per protocol; time from link up to the first upload.",
        discussion: """
            Drain: --positions positions in a SQLitePositionQueue (a temporary file), uploaded by the real \
            Forwarder through each uplink to the loopback collector (in this process: its peak RSS is \
            included), until the queue is empty: positions/s and the peak RSS of the process. \
            Link up (needs root, ip netns and the tern executable beside tern-bench; --trials 0 skips it): \
            `tern run` on the simulated board in a network namespace whose veth link is down while \
            positions queue; the time from `ip link set up` (plus the default route) to the collector's \
            first request, over --trials trials: p50, p95, max.
            """)

    @Option(help: "Positions to drain.")
    var positions = 100_000

    @Option(help: "Link-up trials (0: skip).")
    var trials = 20

    func run() async throws {
        var drains: [[String: Any]] = []
        for (name, batch) in [("tern", 1000), ("traccar", 1)] {
            drains.append(try await drain(protocol: name, batch: batch))
        }
        var report: [String: Any] = [
            "benchmark": "uplink", "positions": positions, "drain": drains,
            "machine": ["os": QueueBench.osName(), "cores": ProcessInfo.processInfo.activeProcessorCount],
        ]
        if trials > 0 { report["link_up_to_first_upload_ms"] = try await linkUp() }
        let json = try JSONOutput.data(report)
        print(String(decoding: json, as: UTF8.self))
    }

    /// Drains `positions` through one protocol.
    private func drain(protocol name: String, batch: Int) async throws -> [String: Any] {
        let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let collector = Collector(logger: logger)
        try await collector.start()
        let directory = NSTemporaryDirectory() + "tern-bench-uplink-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try SQLitePositionQueue(path: directory + "/queue.sqlite", options: .init(ballastBytes: 0))
        for chunk in QueueBench.positions(positions).chunked(10_000) { _ = try await queue.enqueue(contentsOf: chunk) }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try UplinkHTTPSettings().clientConfiguration(for: collector.url))
        let uplink: any Uplink =
            name == "tern"
            ? HTTPUplink(url: collector.url, device: "tern-bench", queueID: queue.queueID, httpClient: client, timeout: .seconds(30), logger: logger)
            : TraccarUplink(
                url: URL(string: "http://127.0.0.1:\(collector.port)/osmand")!, device: "tern-bench", httpClient: client,
                timeout: .seconds(30), logger: logger)
        let forwarder = Forwarder(queue: queue, uplink: uplink, batchSize: name == "tern" ? batch : 100, clock: ContinuousClock(), logger: logger)
        let clock = ContinuousClock()
        let start = clock.now
        var peak = Self.residentKB()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await forwarder.run() }
            while (try? await queue.count()) != 0 {
                try? await Task.sleep(for: .milliseconds(20))
                peak = max(peak, Self.residentKB())
            }
            group.cancelAll()
        }
        let seconds = (clock.now - start).seconds
        let snapshot = await collector.snapshot()
        try await client.shutdown()
        try await collector.stop()
        return [
            "protocol": name, "batch": name == "tern" ? batch : 1, "seconds": QueueBench.round(seconds, 2),
            "positions_per_s": QueueBench.round(Double(positions) / seconds), "arrived_once": snapshot.unique.count,
            "duplicates": snapshot.duplicates, "peak_rss_mb": QueueBench.round(Double(peak) / 1024, 1),
        ]
    }

    /// `tern run` in a namespace; the link comes up after positions queued; ms until the first upload.
    private func linkUp() async throws -> [String: Any] {
        let tern = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "tern").path
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: tern) else {
            return ["skipped": "needs root and the tern executable beside tern-bench"]
        }
        let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        var samples: [Double] = []
        for trial in 0..<trials {
            let ns = NetworkNamespace(index: 30)
            guard ns.created else { return ["skipped": "cannot create a network namespace here"] }
            let collector = Collector(host: ns.outsideAddress, logger: logger)
            try await collector.start()
            let directory = NSTemporaryDirectory() + "tern-bench-link-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try """
                device = "tern-bench"
                data_dir = "\(directory)"
                status_file = "\(directory)/status.json"
                control_socket = "\(directory)/control.sock"
                log_level = "error"
                [receiver]
                kind = "simulated"
                speed = 20
                seed = \(trial + 1)
                [power]
                method = "simulated"
                [scheduler]
                policy = "fixed"
                interval = "5s"
                [uplink]
                url = "\(collector.url.absoluteString)"
                backoff_max = "5m"
                """.write(toFile: directory + "/tern.toml", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(filePath: "/usr/sbin/ip")
            process.arguments = ["netns", "exec", ns.name, tern, "run", "--config", directory + "/tern.toml"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Positions queue while the link is down (and the uploads back off).
            try await Task.sleep(for: .seconds(4))
            let before = await collector.snapshot().requests
            let clock = ContinuousClock()
            let up = clock.now
            ns.setLink(up: true)
            while await collector.snapshot().requests == before, clock.now - up < .seconds(30) {
                try await Task.sleep(for: .milliseconds(5))
            }
            samples.append((clock.now - up).seconds * 1000)
            process.interrupt()
            process.waitUntilExit()
            try? await collector.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let sorted = samples.sorted()
        func percentile(_ p: Double) -> Double { QueueBench.round(Statistics.percentile(sorted: sorted, p), 1) }
        return ["trials": trials, "p50": percentile(0.5), "p95": percentile(0.95), "max": QueueBench.round(sorted.last ?? 0, 1)]
    }

    static func residentKB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        return status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }
}
