import Foundation

/// A size-limited tmpfs mounted for a test (root and mount(8) needed: `canMount` says), unmounted
/// and removed when released. For tests of what a full disk does.
public final class SmallFileSystem {
    public let directory: URL
    public private(set) var mounted = false

    public init(bytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "tern-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        mounted = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path]) == 0
    }

    /// Lazily (`umount -l`): a file a test left open (a queue still held by a task) keeps a plain
    /// unmount busy, and the mount was left behind (145 of them after a day of test runs).
    deinit {
        if mounted { _ = Self.run("/bin/umount", ["-l", directory.path]) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Fills the file system with a file until the kernel says ENOSPC.
    public func fill() throws -> URL {
        let filler = directory.appending(path: "filler")
        FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let block = Data(count: 4096)
        while (try? handle.write(contentsOf: block)) != nil {}
        return filler
    }

    /// Whether a tmpfs can be mounted here (root, and a kernel and container that allow it).
    public static let canMount: Bool = {
        guard getuid() == 0, let fs = try? SmallFileSystem(bytes: 1 << 20) else { return false }
        return fs.mounted
    }()

    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
