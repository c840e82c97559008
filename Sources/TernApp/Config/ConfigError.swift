/// A configuration problem: names the key, what it holds and what is expected. `tern run` exits 78 (EX_CONFIG).
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The dotted key, e.g. `uplink.batch_size`; empty for file-level problems.
    public var key: String
    public var message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String {
        key.isEmpty ? "config error: \(message)" : "config error at \(key): \(message)"
    }

    /// sysexits.h EX_CONFIG: systemd's unit does not restart on it.
    public static let exitCode: Int32 = 78
}
