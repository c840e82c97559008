import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A file of reserved disk space beside the queue. When the disk fills, SQLite cannot checkpoint or
/// even delete acknowledged rows (both write to the WAL) and the queue wedges; giving up the ballast
/// lets them run. It is taken back once the file system has room for it twice over.
struct Ballast: Sendable {
    let path: String
    let bytes: Int

    /// Creates the ballast if it is missing and there is room for it twice over.
    func reserve() {
        guard bytes > 0, !FileManager.default.fileExists(atPath: path), freeBytes() >= 2 * bytes else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // Allocated blocks, not a sparse file: the space must really be held.
        if posix_fallocate(fd, 0, off_t(bytes)) != 0 {
            unlink(path)
        } else {
            fsync(fd)
        }
    }

    /// Gives the ballast's space back to the file system; true when there was one to give.
    func release() -> Bool {
        unlink(path) == 0
    }

    /// Re-creates a released ballast when space has returned.
    func restoreIfRoom() {
        guard bytes > 0, !FileManager.default.fileExists(atPath: path) else { return }
        reserve()
    }

    var isHeld: Bool { FileManager.default.fileExists(atPath: path) }

    /// Free bytes for an unprivileged writer on the ballast's file system.
    func freeBytes() -> Int {
        var stats = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        guard statvfs(directory.isEmpty ? "." : directory, &stats) == 0 else { return 0 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }
}
