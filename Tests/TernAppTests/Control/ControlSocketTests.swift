import Foundation
import Testing
import TernApp
import TernSimulation
import TernTesting

/// The daemon's control socket with real processes: `tern run` on the simulated board, and `tern
/// nmea tail`, `tern receiver send` and `tern status` going through it instead of the UART.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ControlSocketTests {
    static let binary = TernExecutable.url

    /// A running daemon on the simulated board, its config and directory.
    struct Daemon {
        let running: TernExecutable.Running
        let config: String
        let directory: String

        func stop() -> TernExecutable.Result {
            running.process.interrupt()
            return running.finish()
        }
    }

    private func start(uplink: String = "local_collector = true") async throws -> Daemon {
        let directory = NSTemporaryDirectory() + "tern-control-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = directory + "/tern.toml"
        try simulatedBoardConfig(device: "tern-control", directory: directory, extra: "[uplink]\n\(uplink)\nbackoff_max = \"1s\"")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let running = try TernExecutable.start(["run", "--config", config])
        let listening = await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: directory + "/control.sock") }
        #expect(listening)
        return Daemon(running: running, config: config, directory: directory)
    }

    /// Runs `tern ARGUMENTS` for at most `seconds`, then stops it; what it printed.
    private func briefly(_ arguments: [String], seconds: Double) async throws -> TernExecutable.Result {
        let child = try TernExecutable.start(arguments)
        try await Task.sleep(for: .seconds(seconds))
        if child.process.isRunning { child.process.interrupt() }
        return await child.finish()
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func tailGoesThroughTheDaemonAndLeavesItsFixesAlone() async throws {
        let daemon = try await start()
        let before = try await TernExecutable.run(["status", "--config", daemon.config, "--json"])
        let tail = try await briefly(["nmea", "tail", "--config", daemon.config, "--raw"], seconds: 4)
        #expect(tail.stdout.contains("through \(daemon.directory)/control.sock"), "\(tail.stdout)")
        #expect(tail.stdout.contains("$GPRMC"), "the tap shows the receiver's sentences")
        #expect(tail.stdout.split(separator: "\n").contains { $0.first?.isNumber == true }, "a fix line")
        let after = try await TernExecutable.run(["status", "--config", daemon.config, "--json"])
        let seen = { (json: String) in
            (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
                .flatMap { (($0["daemon"] as? [String: Any])?["gateway"] as? [String: Any])?["fixes_seen"] as? Int } ?? -1
        }
        #expect(seen(after.stdout) > seen(before.stdout), "the daemon kept its own fixes while tapped")
        #expect(daemon.stop().status == 0)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func receiverCommandsGoThroughTheDaemon() async throws {
        let daemon = try await start()
        let sent = try await TernExecutable.run(["receiver", "send", "--config", daemon.config, "--chipset", "mediatek", "--timeout", "500ms", "version"])
        #expect(sent.stderr.contains("through the tern daemon"), "\(sent.stderr)")
        // The simulated GPS does not answer PMTK: the command went out and no acknowledgement came.
        #expect(sent.status == 2)
        _ = daemon.stop()
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func statusIsHealthyWhileTheDaemonRunsAndNotRunningAfter() async throws {
        let daemon = try await start()
        let config = daemon.config
        _ = await eventually(within: .seconds(10)) {
            (try? TernExecutable.run(["status", "--config", config]).status) == 0
        }
        await #expect(try TernExecutable.run(["status", "--config", daemon.config]).status == 0)
        #expect(daemon.stop().status == 0)
        let after = try await TernExecutable.run(["status", "--config", daemon.config])
        #expect(after.status == 1, "\(after.stdout)")
        #expect(after.stdout.contains("not-running"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func statusIsDegradedWhenTheServerRefusesTheCredentials() async throws {
        let collector = Collector(logger: .quiet())
        try await collector.start()
        await collector.setFailureStatus(401)
        let daemon = try await start(uplink: "url = \"\(collector.url)\"")
        let config = daemon.config
        let degraded = await eventually(within: .seconds(15)) {
            (try? TernExecutable.run(["status", "--config", config]).status) == 3
        }
        #expect(degraded)
        let text = try await TernExecutable.run(["status", "--config", daemon.config]).stdout
        #expect(text.contains("uplink blocked"), "\(text)")
        _ = daemon.stop()
        try await collector.stop()
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func doctorSeesTheRunningDaemonAsHealthy() async throws {
        let daemon = try await start()
        let config = daemon.config
        _ = await eventually(within: .seconds(10)) {
            (try? TernExecutable.run(["status", "--config", config]).status) == 0
        }
        let result = try await TernExecutable.run(["doctor", "--config", daemon.config])
        let line = result.stdout.split(separator: "\n").first { $0.contains("daemon:") }
        #expect(line?.hasPrefix("ok") == true, "\(result.stdout)")
        _ = daemon.stop()
    }
}
