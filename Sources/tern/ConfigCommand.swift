import ArgumentParser
import Foundation
import TernApp

extension Tern {
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a configuration without starting anything.",
            subcommands: [Check.self])

        struct Check: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Check a config file: exit 0 valid, 2 valid with warnings (a placeholder left in), 78 invalid (names the key).")

            @Argument(help: "The TOML config to check.")
            var file: String = "/etc/tern/tern.toml"

            func run() throws {
                let config: TernConfig
                do {
                    config = try TernConfig.load(path: file)
                } catch {
                    ConsoleLog.error("\(file): \(error)")
                    throw ExitCode(ConfigError.exitCode)
                }
                let warnings = config.warnings
                for warning in warnings { print("warn  \(warning)") }
                print("\(warnings.isEmpty ? "ok" : "ok, with warnings"): \(file) is a valid configuration")
                if !warnings.isEmpty { throw ExitCode(2) }
            }
        }
    }
}
