import ArgumentParser
import Foundation
import TernApp

extension Tern {
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a configuration, or show what it amounts to, without starting anything.",
            subcommands: [Check.self, Show.self, Gate.self])

        struct Check: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Check a config file: exit 0 valid, 2 valid with warnings (a placeholder left in), 78 invalid (names the key).")

            @Argument(help: "The TOML config to check.")
            var file: String = TernConfig.defaultPath

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

        struct Gate: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Whether the service may start on a config: exit 0 start, 3 unconfigured (a placeholder left in, or no file).",
                discussion: """
                    tern.service's ExecCondition: on exit 3 systemd skips the start (the unit is not failed) and \
                    `systemctl status tern` shows why. Harmless warnings do not stop it. An invalid file exits 0 \
                    too, so that `tern run` fails the unit naming the key (exit 78).
                    """)

            @Argument(help: "The TOML config the service would run.")
            var file: String = TernConfig.defaultPath

            func run() throws {
                let verdict = ServiceGate.verdict(path: file, exists: { FileManager.default.fileExists(atPath: $0) })
                for line in ServiceGate.lines(verdict, path: file) {
                    if case .start = verdict { print(line) } else { ConsoleLog.error(line) }
                }
                if case .unconfigured = verdict { throw ExitCode(ServiceGate.unconfiguredExitCode) }
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the effective configuration: every key with its value, and whether the file set it or the default applies.",
                discussion: "Secrets (uplink.token, uplink.password) show only as (set). Exit 78 when the file is invalid (names the key).")

            @Argument(help: "The TOML config to show.")
            var file: String = TernConfig.defaultPath

            func run() throws {
                let trace = ConfigTrace()
                do {
                    _ = try TernConfig.load(path: file, trace: trace)
                } catch {
                    ConsoleLog.error("\(file): \(error)")
                    throw ExitCode(ConfigError.exitCode)
                }
                print("# \(file): the effective configuration (secrets.toml beside it is applied, not shown)")
                print(trace.text())
            }
        }
    }
}
