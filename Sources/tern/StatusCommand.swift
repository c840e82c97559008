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
                and the SQLite queue in data_dir.
                """)

        @Option(help: "Path of the TOML config; the queue and the status report are found from it.")
        var config: String = "/etc/tern/tern.toml"

        @Option(help: "Data directory (overrides the config's data_dir).")
        var dataDir: String?

        @Option(help: "Status report file (overrides the config's status_file).")
        var statusFile: String?

        @Flag(help: "Print the daemon's report as JSON.")
        var json = false

        func run() async throws {
            let loaded = try loadConfig()
            let statusPath = statusFile ?? loaded?.statusFile ?? TernConfig.defaultStatusFile
            let report: StatusReport?
            do {
                report = try StatusFile(path: statusPath).read()
            } catch {
                fail("cannot read the status report \(statusPath): \(error.localizedDescription); run as root or as a member of the tern group")
            }
            if json {
                guard let report else { fail(noReport(statusPath)) }
                FileHandle.standardOutput.write(try report.json() + Data("\n".utf8))
                return
            }
            let queuePath = dataDir.map { ($0 as NSString).appendingPathComponent("queue.sqlite") } ?? loaded?.queuePath
            if let queuePath, FileManager.default.fileExists(atPath: queuePath) {
                // Read-only: never migrates or writes the daemon's database.
                let stats: QueueStats
                do { stats = try QueueReader(path: queuePath).stats() } catch { fail("\(error)") }
                QueueText.lines(stats, path: queuePath).forEach { print($0) }
            } else if report == nil {
                fail("no queue at \(queuePath ?? "?") and \(noReport(statusPath))")
            } else {
                print("queue          none at \(queuePath ?? "?") yet")
            }
            if let report {
                StatusText.lines(report, now: Date()).forEach { print($0) }
            } else {
                print("daemon         \(noReport(statusPath))")
            }
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
