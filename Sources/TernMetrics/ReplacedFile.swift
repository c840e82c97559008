import Foundation

/// A file that readers must always see whole but that need not survive a power cut (the metrics
/// textfile, the status report): written to a temporary file beside it, whose name starts with a dot
/// and does not end in the file's extension, then renamed over it. Never fsynced: after a power cut
/// the old or the new file is there (ext4 orders a rename-over-replace after its data), and an fsync
/// at every refresh would only wear the SD card for figures the next refresh rewrites anyway
/// (docs/durability.md, "SD card wear").
public enum ReplacedFile {
    /// Why a file could not be replaced: the system's reason.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        public var description: String { "cannot write \(path) (\(reason))" }
    }

    /// Replaces `path` with `bytes`: readable with `mode` whatever the umask, or as the umask allows (nil).
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t? = nil) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = ((directory.isEmpty ? "." : directory) as NSString).appendingPathComponent(".\(name).\(getpid()).tmp")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode ?? 0o666)
        guard fd >= 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        if let mode { fchmod(fd, mode) }
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw Failure(path: path, reason: reason)
            }
            written += result
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(path: path, reason: reason)
        }
    }
}
