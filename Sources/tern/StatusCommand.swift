import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernStore

extension Tern {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the store-and-forward queue: how many positions wait, since when.")

        @Option(help: "Path of the TOML config; the queue is found in its data_dir.")
        var config: String = "/etc/tern/tern.toml"

        @Option(help: "Data directory (overrides the config's data_dir).")
        var dataDir: String?

        func run() async throws {
            let path: String
            if let dataDir {
                path = (dataDir as NSString).appendingPathComponent("queue.sqlite")
            } else {
                do {
                    path = try TernConfig.load(path: config).queuePath
                } catch {
                    FileHandle.standardError.write(Data("tern: \(config): \(error)\n".utf8))
                    throw ExitCode(ConfigError.exitCode)
                }
            }
            guard FileManager.default.fileExists(atPath: path) else {
                FileHandle.standardError.write(Data("tern: no queue at \(path): has `tern run` started with this data_dir?\n".utf8))
                throw ExitCode.failure
            }
            let stats = try await SQLitePositionQueue(path: path).stats()
            print("queue          \(path)")
            print("waiting        \(stats.depth) positions")
            print("oldest waiting \(stats.oldestTime.map(WireTime.format) ?? "-")")
            print("last sequence  \(stats.lastSequence.map(String.init) ?? "-")")
        }
    }
}
