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

        @Option(help: "Time between fixes, e.g. 30s.", transform: DurationArgument.parse)
        var interval: Duration = .seconds(30)

        @Option(help: "Random seed of the simulated receiver.")
        var seed: UInt64 = 1

        @Flag(help: "Print the summary as JSON on stdout.")
        var json = false

        @Option(help: "Log level: trace, debug, info, notice, warning, error.")
        var logLevel: Logger.Level = .warning

        func validate() throws {
            guard speed >= 0.1, speed <= 1000 else { throw ValidationError("--speed must be from 0.1 to 1000") }
            guard duration > .zero else { throw ValidationError("--duration must be positive") }
            guard interval >= .zero else { throw ValidationError("--interval must not be negative") }
        }

        func run() async throws {
            var logger = Logger(label: "tern.demo", factory: { StreamLogHandler.standardError(label: $0) })
            logger.logLevel = logLevel
            let options = DemoOptions(duration: duration, speed: speed, dataDirectory: dataDir, interval: interval, seed: seed)
            let line = StatusLine()
            if !json {
                print("Tern demo: \(Int(duration.seconds))s simulated at \(speed)× on the simulated board; the collector goes offline from 30% to 60%. Ctrl-C ends early.")
            }
            let summary = try await TernApp.Demo(options: options, logger: logger).run { line.show($0.line) }
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
