import ArgumentParser
import Foundation
import Logging
import TernApp

extension Tern {
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the whole pipeline on the built-in simulated board, with a local collector that goes offline and back.")

        @Option(help: "Simulated time to run, e.g. 15m, 900s, 1h.", transform: DurationArgument.parse)
        var duration: Duration = .seconds(900)

        @Option(help: "Simulated seconds per real second.")
        var speed: Double = 20

        @Option(help: "Directory for the SQLite queue (default: a new temporary directory).")
        var dataDir: String?

        @Option(help: "The configuration to run (a simulated board's); default: board/simulated.toml, built in.")
        var config: String?

        @Option(help: "Random seed of the simulated receiver (default: the configuration's).")
        var seed: UInt64?

        @Flag(help: "Print the summary as JSON on stdout.")
        var json = false

        @Option(help: "Log level: trace, debug, info, notice, warning, error.")
        var logLevel: Logger.Level = .warning

        func validate() throws {
            guard speed >= 0.1, speed <= 1000 else { throw ValidationError("--speed must be from 0.1 to 1000") }
            guard duration > .zero else { throw ValidationError("--duration must be positive") }
        }

        func run() async throws {
            var logger = Logger(label: "tern.demo", factory: { StreamLogHandler.standardError(label: $0) })
            logger.logLevel = logLevel
            let options = DemoOptions(duration: duration, speed: speed, dataDirectory: dataDir, configPath: config, seed: seed)
            let demo = TernApp.Demo(options: options, logger: logger)
            let rules: RulesInForce
            do { rules = RulesInForce(try demo.config(dataDirectory: dataDir ?? "-")) } catch {
                ConsoleLog.error("\(config ?? SimulatedBoardProfile.path): \(error)")
                throw ExitCode(ConfigError.exitCode)
            }
            let line = StatusLine()
            if !json {
                print("""
                    Tern demo: \(Int(duration.seconds))s simulated at \(speed)× on the simulated board, running \(config ?? SimulatedBoardProfile.path) \
                    as the daemon reads it; the collector goes offline from 30% to 60%. Ctrl-C ends early.
                      policy  \(rules.policy)
                      filter  \(rules.filter)
                      store   \(rules.store)
                    """)
            }
            let summary = try await demo.run { line.show($0.line) }
            line.finish()
            if json {
                print(try summary.jsonString())
            } else {
                print(summary.text)
            }
            if !summary.isClean { throw ExitCode(1) }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
