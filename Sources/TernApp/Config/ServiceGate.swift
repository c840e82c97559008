/// Whether the service may start on a config file: the unit's `ExecCondition=` (`tern config gate`).
/// A placeholder or a missing file is "unconfigured": the start is skipped, not failed, and the
/// journal says what to set. An invalid file passes the gate, so that `tern run` fails the unit
/// with the key (exit 78, not restarted).
public enum ServiceGate {
    /// `tern config gate`'s exit for an unconfigured tracker (1–254: systemd skips the start).
    public static let unconfiguredExitCode: Int32 = 3

    public enum Verdict: Equatable, Sendable {
        /// Start; the warnings are harmless to a running tracker.
        case start(warnings: [String])
        /// Do not start: each reason names the key and what to set.
        case unconfigured([String])
        /// Start, so that `tern run` reports the error and the unit fails.
        case invalid(ConfigError)
    }

    public static func verdict(path: String, exists: (String) -> Bool) -> Verdict {
        guard exists(path) else {
            return .unconfigured(["\(path) does not exist: write it from the board profile of your HAT (board/*.toml in Tern's repository)"])
        }
        let config: TernConfig
        do {
            config = try TernConfig.load(path: path)
        } catch {
            return .invalid(error)
        }
        let placeholders = config.placeholders
        return placeholders.isEmpty ? .start(warnings: config.warnings) : .unconfigured(placeholders)
    }

    /// What the gate prints (to the journal, under `systemctl status tern`).
    public static func lines(_ verdict: Verdict, path: String) -> [String] {
        switch verdict {
        case let .start(warnings):
            return warnings.map { "warn  \($0)" } + ["ok: \(path) is configured; starting"]
        case let .unconfigured(reasons):
            return ["not started: \(path) is not configured for this tracker yet"] + reasons.map { "  \($0)" }
                + ["edit \(path) (tern config check \(path)), then: systemctl start tern"]
        case let .invalid(error):
            return ["\(path): \(error) (tern run will refuse it and the unit fails; fix it, then: systemctl restart tern)"]
        }
    }
}
