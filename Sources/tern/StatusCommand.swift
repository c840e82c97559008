import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernStore

extension Tern {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what the running gateway is doing: receiver power, scheduler, last fix, uplink, queue.",
            discussion: """
                Reads the report `tern run` rewrites every 10 s in status_file (default \(TernConfig.defaultStatusFile)) \
                and the SQLite queue in data_dir (read-only). Exit codes: 0 healthy; 1 the daemon is not running \
                (no report, a report older than 30 s, or its process gone); 3 degraded (uplink blocked, receiver \
                link not connected, queue beyond --max-queue or a day old, no fix for --max-fix-age, positions lost).
                """)

        @Option(help: "Path of the TOML config; the queue and the status report are found from it.")
        var config: String = TernConfig.defaultPath

        @Option(help: "Data directory (overrides the config's data_dir).")
        var dataDir: String?

        @Option(help: "Status report file (overrides the config's status_file).")
        var statusFile: String?

        @Option(help: "The daemon's control socket, for a live report (default: the config's control_socket).")
        var controlSocket: String?

        @Flag(help: "Print a JSON document (schema 1, see docs/diagnostics.md: health, problems, queue, last fix and upload, the daemon's report).")
        var json = false

        @Option(help: "Degraded beyond this many queued positions.")
        var maxQueue = 10_000

        @Option(help: "Degraded when no fix was accepted for this long (e.g. 1h, 30m).")
        var maxFixAge = "1h"

        func run() async throws {
            let loaded = try loadConfig()
            let statusPath = statusFile ?? loaded?.statusFile ?? TernConfig.defaultStatusFile
            var report: StatusReport?
            // Live from the daemon's control socket when it answers; else the report file it rewrites every 10 s.
            var problem: String?
            // Only the socket of the daemon asked about: an explicit --status-file names another one.
            let socket = controlSocket ?? (statusFile == nil ? loaded?.controlSocket : nil)
            if let socket, let client = ControlClient(path: socket, error: &problem) {
                for await message in client.send(ControlMessage(command: "status")) { report = message.status ?? report }
            }
            if report == nil {
                do {
                    report = try StatusFile(path: statusPath).read()
                } catch {
                    fail("cannot read the status report \(statusPath): \(error.localizedDescription); run as root or as a member of the tern group")
                }
            }
            let queuePath = dataDir.map { ($0 as NSString).appendingPathComponent("queue.sqlite") } ?? loaded?.queuePath
            // Read-only: never migrates or writes the daemon's database.
            var stats: QueueStats?
            var queueError: String?
            if let queuePath, FileManager.default.fileExists(atPath: queuePath) {
                do { stats = try QueueReader(path: queuePath).stats() } catch { queueError = "\(error)" }
            }
            var limits = StatusHealth.Limits()
            limits.maxQueueDepth = maxQueue
            guard let fixAge = DurationText.parse(maxFixAge) else { throw ValidationError("--max-fix-age: expected a duration such as 1h, got \(maxFixAge)") }
            limits.maxFixAge = fixAge.seconds
            var health = StatusHealth.judge(report: report, queue: stats, now: Date(), limits: limits, processAlive: StatusHealth.isTernProcess)
            if let queueError, case .healthy = health { health = .degraded(problems: ["queue unreadable: \(queueError)"]) }
            if json {
                FileHandle.standardOutput.write(try StatusDocument(health: health, report: report, queue: stats, now: Date()).json() + Data("\n".utf8))
                throw ExitCode(health.exitCode)
            }
            print("health         \(health.name)\(health.problems.isEmpty ? "" : ": " + health.problems.joined(separator: "; "))")
            if let stats, let queuePath {
                QueueText.lines(stats, path: queuePath).forEach { print($0) }
            } else {
                print("queue          \(queueError ?? "none at \(queuePath ?? "?") yet")")
            }
            if let report {
                StatusText.lines(report, now: Date()).forEach { print($0) }
            } else {
                print("daemon         \(noReport(statusPath))")
            }
            throw ExitCode(health.exitCode)
        }

        /// The config, when given or present; nil with --data-dir and no config file.
        private func loadConfig() throws -> TernConfig? {
            if dataDir != nil, !FileManager.default.fileExists(atPath: config) { return nil }
            do {
                return try TernConfig.load(path: config)
            } catch {
                FileHandle.standardError.write(Data("tern: \(config): \(error)\n".utf8))
                throw ExitCode(ConfigError.exitCode)
            }
        }

        private func noReport(_ path: String) -> String {
            "no status report at \(path): has `tern run` started with this status_file? (systemctl status tern)"
        }

        private func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("tern: \(message)\n".utf8))
            Foundation.exit(1)
        }
    }
}
