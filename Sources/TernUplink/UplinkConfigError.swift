/// An uplink setting that cannot work, found when the uplink is made: names the key, what it holds and
/// what is expected, in the words of `TernApp`'s `ConfigError` (which it maps to one for one).
public struct UplinkConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The dotted key, e.g. `uplink.tracker_id`.
    public var key: String
    public var message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public init(key: String, found: String, expected: String) {
        self.init(key: key, "expected \(expected), got \"\(found)\"")
    }

    public var description: String { "config error at \(key): \(message)" }
}
