import Foundation

/// Writes the metrics as a node_exporter textfile (`DIR/tern.prom`), atomically and not fsynced
/// (`ReplacedFile`): the temporary file's name does not end in `.prom`, so node_exporter skips it.
public struct TextfileExporter: Sendable {
    public let directory: String
    public let fileName: String

    /// Debian's `prometheus-node-exporter` reads this directory (`--collector.textfile.directory`).
    public static let debianDirectory = "/var/lib/prometheus/node-exporter"

    public init(directory: String, fileName: String = "tern.prom") {
        self.directory = directory
        self.fileName = fileName
    }

    public var path: String { (directory as NSString).appendingPathComponent(fileName) }

    public func write(_ text: String) throws(MetricsExportError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .noDirectory(directory)
        }
        do {
            // The mode is not left to the umask: node_exporter runs as another user and must read the file.
            try ReplacedFile.write(Array(text.utf8), to: path, mode: 0o644)
        } catch {
            throw .cannotWrite(directory, reason: error.reason)
        }
    }
}

/// Why the metrics could not be exported, with the fix.
public enum MetricsExportError: Error, Sendable, Hashable, CustomStringConvertible {
    case noDirectory(String)
    case cannotWrite(String, reason: String)
    case cannotListen(String, reason: String)

    public var description: String {
        switch self {
        case let .noDirectory(directory):
            "metrics.textfile_dir \(directory) does not exist: install prometheus-node-exporter (it creates \(TextfileExporter.debianDirectory)) or create the directory, writable by the tern user"
        case let .cannotWrite(directory, reason):
            "cannot write metrics to \(directory) (\(reason)): make it writable by the tern user (e.g. setfacl -m u:tern:rwx \(directory)), or the disk is full"
        case let .cannotListen(address, reason):
            "cannot serve metrics on \(address) (\(reason)): pick a free port in metrics.listen"
        }
    }
}
