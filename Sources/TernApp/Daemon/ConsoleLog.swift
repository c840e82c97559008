import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Where Tern's log lines and start-up errors go, and in which form: under systemd (stderr connected
/// to the journal, `JOURNAL_STREAM`), each line starts with its syslog priority `<N>` and carries no
/// timestamp (the journal adds its own), so `journalctl -u tern -p warning` selects by level;
/// elsewhere, swift-log's readable stream format.
public enum ConsoleLog {
    /// Whether stderr is the journal: `JOURNAL_STREAM` names stderr's device and inode (systemd sets it
    /// for the service's stdout/stderr; a shell started from the service would inherit a stale one).
    public static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":").compactMap { UInt64($0) }
        var info = stat()
        guard parts.count == 2, fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == parts[0] && UInt64(info.st_ino) == parts[1]
    }

    /// The log handler for `label`.
    public static func handler(label: String, journal: Bool = stderrIsJournal()) -> any LogHandler {
        journal ? JournalLogHandler(label: label) : StreamLogHandler.standardError(label: label)
    }

    /// Writes an error Tern could not log yet (a config that does not load): `tern: …`, prefixed
    /// `<3>` for the journal.
    public static func error(_ text: String, journal: Bool = stderrIsJournal()) {
        FileHandle.standardError.write(Data(((journal ? "<3>" : "") + "tern: " + text + "\n").utf8))
    }
}

/// swift-log to the journal through stderr: `<priority>label: message key=value …`, one line each.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let write: @Sendable (String) -> Void

    public init(label: String, write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        write(Self.line(level: level, label: label, message: "\(message)", metadata: metadata.merging(explicit ?? [:]) { $1 }))
    }

    /// The syslog priority of a level (RFC 5424: 2 critical … 7 debug).
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// One journal line; newlines inside the message are flattened (the journal splits on them).
    public static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = (message + (fields.isEmpty ? "" : " " + fields)).replacingOccurrences(of: "\n", with: " ")
        return "<\(priority(level))>\(label): \(text)\n"
    }
}
