import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TernTesting

/// `[metrics]` through real processes: `tern run` on the simulated board writes the textfile that
/// Debian's prometheus-node-exporter serves (and promtool accepts), and answers `GET /metrics`.
@Suite(.timeLimit(.minutes(5)), .serialized) struct MetricsExportTests {
    static let binary = TernExecutable.url
    static let nodeExporter = "/usr/bin/prometheus-node-exporter"
    static let promtool = "/usr/bin/promtool"

    /// Runs the daemon with `metrics` as its `[metrics]` section while `body` runs, in a new directory.
    private func withDaemon(metrics: (String) -> String, _ body: (String) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "tern-metrics-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/textfiles", withIntermediateDirectories: true)
        let config = directory + "/tern.toml"
        try simulatedBoardConfig(
            device: "tern-metrics", directory: directory,
            extra: "[uplink]\nlocal_collector = true\n[metrics]\ninterval = \"1s\"\n\(metrics(directory))"
        ).write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try TernExecutable.start(["run", "--config", config])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            try await body(directory)
        } catch {
            daemon.process.interrupt()
            _ = await daemon.finish()
            throw error
        }
        daemon.process.interrupt()
        let result = await daemon.finish()
        #expect(result.status == 0, "\(result.stderr)")
    }


    private func scrape(_ url: String) async -> String? {
        guard let url = URL(string: url), let (data, _) = try? await URLSession.shared.data(from: url) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Scrapes `url` until what it serves satisfies `condition` (or `limit` passes); the last text served.
    private func scrape(_ url: String, within limit: Duration, until condition: (String) -> Bool) async -> String {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        var text = ""
        repeat {
            text = await scrape(url) ?? ""
            if condition(text) { break }
            try? await Task.sleep(for: .milliseconds(200))
        } while clock.now < deadline
        return text
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"),
          .enabled(if: FileManager.default.isExecutableFile(atPath: nodeExporter),
                   "Debian's prometheus-node-exporter is not installed (.ci/run installs it)"))
    func nodeExporterServesTheTextfileTheDaemonWrites() async throws {
        let port = try #require(LoopbackPort.free())
        try await withDaemon(metrics: { "textfile_dir = \"\($0)/textfiles\"" }) { directory in
            let textfile = directory + "/textfiles/tern.prom"
            let accepted = await eventually(within: .seconds(20)) {
                let text = (try? String(contentsOfFile: textfile, encoding: .utf8)) ?? ""
                return (prometheusValue(text, "tern_fixes_accepted_total") ?? 0) > 0
            }
            #expect(accepted, "the textfile counts accepted fixes")
            let exporter = try DaemonProcess(Self.nodeExporter, [
                "--web.listen-address=127.0.0.1:\(port)", "--collector.disable-defaults", "--collector.textfile",
                "--collector.textfile.directory=\(directory)/textfiles",
            ], output: directory + "/node-exporter.log")
            defer { exporter.signal(SIGTERM) }
            let served = await scrape("http://127.0.0.1:\(port)/metrics", within: .seconds(10)) {
                $0.contains("tern_positions_enqueued_total")
            }
            #expect(prometheusValue(served, "node_textfile_scrape_error") == 0, "node_exporter parsed the file: \(served.prefix(2000))")
            #expect(served.contains(#"device="tern-metrics""#), "tern_build_info names the device")
            #expect(served.contains(#"tern_receiver_link_state{state="connected"} 1"#))
            #expect((prometheusValue(served, "tern_receiver_power_cycles_total") ?? 0) >= 1)
        }
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"),
          .enabled(if: FileManager.default.isExecutableFile(atPath: promtool), "promtool (Debian's prometheus) is not installed (.ci/run installs it)"))
    func promtoolAcceptsTheTextfile() async throws {
        try await withDaemon(metrics: { "textfile_dir = \"\($0)/textfiles\"" }) { directory in
            let textfile = directory + "/textfiles/tern.prom"
            #expect(await eventually(within: .seconds(20)) { FileManager.default.fileExists(atPath: textfile) })
            let check = Process()
            check.executableURL = URL(filePath: Self.promtool)
            check.arguments = ["check", "metrics"]
            check.standardInput = try FileHandle(forReadingFrom: URL(filePath: textfile))
            let output = Pipe()
            check.standardOutput = output
            check.standardError = output
            try check.run()
            let text = try await TernExecutable.offload {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                check.waitUntilExit()
                return String(decoding: data, as: UTF8.self)
            }
            #expect(check.terminationStatus == 0, "\(text)")
        }
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func theDaemonAnswersMetricsScrapesOnItsLoopbackPort() async throws {
        let port = try #require(LoopbackPort.free())
        try await withDaemon(metrics: { _ in "listen = \"127.0.0.1:\(port)\"" }) { _ in
            let url = "http://127.0.0.1:\(port)/metrics"
            let first = await scrape(url, within: .seconds(20)) { (prometheusValue($0, "tern_fixes_accepted_total") ?? 0) > 0 }
            let before = try #require(prometheusValue(first, "tern_fixes_seen_total"), "\(first)")
            let later = await scrape(url, within: .seconds(20)) { (prometheusValue($0, "tern_fixes_seen_total") ?? 0) > before }
            #expect((prometheusValue(later, "tern_fixes_seen_total") ?? 0) > before, "every scrape reads the daemon's counters afresh")
        }
    }

    /// A listening socket on the loopback `port`: another program holding it.
    private func holdPort(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        return fd
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aTakenMetricsPortKeepsTheDaemonTrackingAndIsBoundOnceFreed() async throws {
        let port = try #require(LoopbackPort.free())
        let holder = try holdPort(port)
        var held = true
        defer { if held { close(holder) } }
        try await withDaemon(metrics: { "textfile_dir = \"\($0)/textfiles\"\nlisten = \"127.0.0.1:\(port)\"" }) { directory in
            let textfile = directory + "/textfiles/tern.prom"
            let reported = await eventually(within: .seconds(20)) {
                let text = (try? String(contentsOfFile: textfile, encoding: .utf8)) ?? ""
                return prometheusValue(text, "tern_service_problems") == 1 && (prometheusValue(text, "tern_fixes_accepted_total") ?? 0) > 0
            }
            #expect(reported, "the daemon tracks on and counts the taken port as a problem")
            close(holder)
            held = false
            let served = await scrape("http://127.0.0.1:\(port)/metrics", within: .seconds(30)) { prometheusValue($0, "tern_service_problems") == 0 }
            #expect(prometheusValue(served, "tern_service_problems") == 0, "the port is bound once freed, the problem gone: \(served.prefix(500))")
        }
    }
}
