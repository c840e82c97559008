import Foundation
import Testing
import TernTesting

/// The `tern` executable as users and systemd run it: exit codes, messages, signals.
@Suite(.timeLimit(.minutes(5))) struct CommandLineTests {
    static let binary = TernExecutable.url

    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "tern-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func run(_ arguments: [String]) throws -> TernExecutable.Result {
        try TernExecutable.run(arguments)
    }

    private func writeConfig(_ text: String) throws -> String {
        let path = try temporaryDirectory() + "/tern.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func badConfigExitsWith78AndNamesTheKey() throws {
        let config = try writeConfig("[receiver]\nbaud = 9601\n[uplink]\nurl = \"http://127.0.0.1:1/\"\n")
        let result = try run(["run", "--config", config])
        #expect(result.status == 78)
        #expect(result.stderr.contains("receiver.baud"))
        #expect(result.stderr.contains("9600"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func anUplinkSettingThatCannotWorkExitsWith78NamingTheKey() throws {
        let config = try writeConfig("""
            data_dir = "\(try temporaryDirectory())"
            [receiver]
            kind = "simulated"
            [uplink]
            protocol = "owntracks-http"
            url = "http://127.0.0.1:1/pub"
            tracker_id = "TOO-LONG"
            """)
        let result = try run(["run", "--config", config])
        #expect(result.status == 78)
        #expect(result.stderr.contains("uplink.tracker_id"), "\(result.stderr)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func missingConfigExitsWith78() throws {
        let result = try run(["run", "--config", "/nonexistent/tern.toml"])
        #expect(result.status == 78)
        #expect(result.stderr.contains("no such file"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func statusWithoutADaemonReportSaysWhereItLooked() throws {
        let dataDirectory = try temporaryDirectory()
        let result = try run(["status", "--data-dir", dataDirectory, "--status-file", dataDirectory + "/status.json", "--json"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("\"health\" : \"not-running\""), "\(result.stdout)")
        #expect(result.stdout.contains("\"schema\" : 1"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func sigtermStopsTheDaemonCleanly() async throws {
        let dataDirectory = try temporaryDirectory()
        let config = try writeConfig("""
            data_dir = "\(dataDirectory)"
            status_file = "\(dataDirectory)/run/status.json"
            control_socket = "\(dataDirectory)/control.sock"
            log_level = "info"
            [receiver]
            kind = "simulated"
            speed = 50
            [scheduler]
            interval = "10s"
            [uplink]
            local_collector = true
            """)
        let tern = try TernExecutable.start(["run", "--config", config])
        let queue = dataDirectory + "/queue.sqlite"
        let deadline = ContinuousClock.now + .seconds(20)
        var status = try run(["status", "--data-dir", dataDirectory])
        /// The last sequence `tern status` printed (0 before any).
        func lastSequence(_ text: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix("last sequence") }
                .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        // Wait until the pipeline has stored something (sequence assigned).
        while ContinuousClock.now < deadline && lastSequence(status.stdout) < 1 {
            try await Task.sleep(for: .milliseconds(200))
            if FileManager.default.fileExists(atPath: queue) { status = try run(["status", "--data-dir", dataDirectory]) }
        }
        #expect(lastSequence(status.stdout) >= 1, "no position stored within 20 s: \(status.stdout)")
        // The daemon's own report (written at start and every 10 s), found through the config.
        let report = try run(["status", "--config", config])
        #expect(report.status == 0, "stderr: \(report.stderr)")
        #expect(report.stdout.contains("daemon         running (pid \(tern.process.processIdentifier))"), "\(report.stdout)")
        #expect(report.stdout.contains("scheduler      fixed 10s"), "\(report.stdout)")
        tern.process.terminate()  // SIGTERM, as systemd stops the service
        let result = await tern.finish()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("gateway stopped"))
    }
}
