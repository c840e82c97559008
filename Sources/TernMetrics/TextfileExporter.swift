import Foundation

/// Writes the metrics as a node_exporter textfile (`DIR/tern.prom`), atomically: a temporary file in
/// the same directory whose name does not end in `.prom` (node_exporter skips it), renamed over the old
/// file, so a scrape never reads half a file. Not fsynced: after a power cut the old or the new file is
/// there (ext4 orders a rename-over-replace after its data), and a fsync every interval would only
/// wear the SD card for figures the next write refreshes anyway.
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
        let temporary = (directory as NSString).appendingPathComponent(".\(fileName).\(getpid()).tmp")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(directory, reason: String(cString: strerror(errno))) }
        // The mode is not left to the umask: node_exporter runs as another user and must read the file.
        fchmod(fd, 0o644)
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw .cannotWrite(directory, reason: reason)
            }
            written += result
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .cannotWrite(directory, reason: reason)
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
