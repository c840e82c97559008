import Logging

extension Logger {
    /// A logger that drops everything, for tests.
    public static func quiet(_ label: String = "test") -> Logger {
        Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
