#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one child process cost.
struct ChildRun {
    var wallSeconds: Double
    /// Peak resident set size of the child, bytes: its `VmHWM` (/proc/PID/status), sampled every
    /// millisecond until it exits. Not `ru_maxrss` from `wait4`: Linux carries the RSS of the
    /// address space a process had before `execve` into `ru_maxrss`, and a `posix_spawn`ed child
    /// starts out in the parent's (vfork), so `ru_maxrss` would report this Swift process's own
    /// ~20 MB for any tool. `VmHWM` belongs to the executed program's address space only; it is a
    /// high-water mark, so sampling misses at most a rise in the child's last millisecond.
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
/// measures wall time from just before `posix_spawn` until `waitpid` reaps it (polled every
/// millisecond, at which the child's `VmHWM` is sampled too).
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
    var rss = 0
    let statusFile = "/proc/\(pid)/status"
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        if reaped < 0 {
            guard errno == EINTR else { throw SpawnError.wait(errno) }
            continue
        }
        rss = max(rss, highWaterMark(statusFile))
        usleep(1000)
    }
    let wall = monotonicSeconds() - start
    let exit: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return ChildRun(wallSeconds: wall, peakRSSBytes: rss, exitStatus: exit)
}

/// `VmHWM` from a /proc/PID/status file, bytes; 0 when unreadable (or the process is a zombie).
func highWaterMark(_ statusFile: String) -> Int {
    let fd = open(statusFile, O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let text = String(decoding: buffer[0..<count], as: UTF8.self)
    guard let range = text.range(of: "VmHWM:") else { return 0 }
    let digits = text[range.upperBound...].drop(while: { $0 == " " || $0 == "\t" }).prefix(while: \.isNumber)
    return (Int(digits) ?? 0) * 1024  // kB
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
