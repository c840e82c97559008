#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one child process cost.
struct ChildRun {
    var wallSeconds: Double
    /// Peak resident set size of the child, bytes (`ru_maxrss` from `wait4`).
    var peakRSSBytes: Int
    var exitStatus: Int32
}

enum SpawnError: Error, CustomStringConvertible {
    case spawn(String, Int32)
    case wait(Int32)

    var description: String {
        switch self {
        case let .spawn(path, code): "cannot start \(path): \(String(cString: strerror(code)))"
        case let .wait(code): "wait4 failed: \(String(cString: strerror(code)))"
        }
    }
}

/// Runs `path arguments...` with stdin and stdout redirected to files, stderr inherited, and
/// measures wall time from just before `posix_spawn` to the return of `wait4`, which also gives
/// the child's peak RSS.
func runChild(_ path: String, _ arguments: [String], stdin: String, stdout: String) throws -> ChildRun {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }

    var pid: pid_t = 0
    let start = monotonicSeconds()
    let code = argv.withUnsafeBufferPointer { buffer in
        posix_spawn(&pid, path, &actions, nil, UnsafeMutablePointer(mutating: buffer.baseAddress!), environ)
    }
    guard code == 0 else { throw SpawnError.spawn(path, code) }

    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { throw SpawnError.wait(errno) }
    }
    let wall = monotonicSeconds() - start
    // Linux reports ru_maxrss in KiB (macOS in bytes).
    #if os(Linux)
    let rss = Int(usage.ru_maxrss) * 1024
    #else
    let rss = Int(usage.ru_maxrss)
    #endif
    let exit: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return ChildRun(wallSeconds: wall, peakRSSBytes: rss, exitStatus: exit)
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
