import ArgumentParser
import Foundation
import Logging
import TernApp

extension Tern {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the gateway as a service, with devices and server from a config file.",
            discussion: "Exit codes: 0 clean shutdown, 78 configuration error (names the key), 1 other failure.")

        @Option(help: "Path of the TOML config (see board/*.toml).")
        var config: String = TernConfig.defaultPath

        func run() async throws {
            let loaded: TernConfig
            do {
                loaded = try TernConfig.load(path: config)
            } catch {
                ConsoleLog.error("\(config): \(error)")
                throw ExitCode(ConfigError.exitCode)
            }
            var logger = Logger(label: "tern", factory: { ConsoleLog.handler(label: $0) })
            logger.logLevel = Logger.Level(rawValue: loaded.logLevel) ?? .info
            do {
                try await Daemon(config: loaded, logger: logger).run()
            } catch let error as ConfigError {
                ConsoleLog.error("\(config): \(error)")
                throw ExitCode(ConfigError.exitCode)
            } catch {
                ConsoleLog.error("\(error)")
                throw ExitCode.failure
            }
        }
    }
}
