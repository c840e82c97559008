/// Every key a configuration read, with its effective value and whether the file set it or the
/// default applied: what `tern config show` prints. Filled by `TernConfig.parse(_:trace:)`.
public final class ConfigTrace {
    public struct Entry: Sendable, Hashable {
        /// The full key, e.g. `filter.warm_up`.
        public var key: String
        /// As TOML: `"3s"`, `17`, `true`, `"https://…"`; `(unset)` for an optional key not set.
        public var value: String
        public var fromFile: Bool

        public init(key: String, value: String, fromFile: Bool) {
            self.key = key
            self.value = value
            self.fromFile = fromFile
        }
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    func note(key: String, value: String, fromFile: Bool) {
        entries.append(Entry(key: key, value: value, fromFile: fromFile))
    }

    /// One line per key, in reading order: `key = value   # file` or `# default`. Secrets (a token,
    /// a password) are never printed, only whether they are set.
    public func text() -> String {
        let secret: Set<String> = ["uplink.token", "uplink.password"]
        let shown = entries.map { entry -> (String, String) in
            let value = secret.contains(entry.key) && entry.value != "(unset)" ? "(set)" : entry.value
            return ("\(entry.key) = \(value)", entry.fromFile ? "file" : "default")
        }
        let width = shown.map(\.0.count).max() ?? 0
        return shown.map { line, source in
            line.padding(toLength: width, withPad: " ", startingAt: 0) + "   # \(source)"
        }.joined(separator: "\n")
    }
}
