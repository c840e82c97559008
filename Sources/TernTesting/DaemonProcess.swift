#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the test starts (a broker, a client) with the signal dispositions a shell would give it.
///
/// Not Foundation's `Process`: that `posix_spawn`s from the calling thread and the child inherits its
/// signal mask, and the test runner's threads block nearly every signal, SIGTERM included; a daemon
/// started that way never sees `terminate()` and never exits cleanly. Here the child starts with an
/// empty mask and default handlers, and with none of the test's descriptors beyond stdin, stdout and
/// stderr: NIO opens its sockets without close-on-exec, and a broker that inherited another test's
/// listening socket would hold that port (or keep a connection the test closed open).
public final class DaemonProcess: Sendable {
    public let pid: pid_t
    public let path: String

    /// Starts `path arguments…` with stdout (and stderr) written to `output`, or discarded.
    public init(_ path: String, _ arguments: [String], output: String? = nil) throws(DaemonProcessError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        try Self.closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let code = argv.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return EINVAL }
            return posix_spawn(&pid, path, &actions, &attributes, UnsafeMutablePointer(mutating: base), environ)
        }
        guard code == 0 else { throw DaemonProcessError(description: "cannot start \(path): \(String(cString: strerror(code)))") }
        self.pid = pid
        self.path = path
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module does not
    /// declare it): closes every descriptor from 3 up in the child.
    static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) throws(DaemonProcessError) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw DaemonProcessError(description: "posix_spawn_file_actions_addclosefrom_np is missing: glibc 2.34 or later is needed")
        }
        let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
        let code = closeFrom(&actions, 3)
        guard code == 0 else {
            throw DaemonProcessError(description: "posix_spawn_file_actions_addclosefrom_np failed: \(String(cString: strerror(code)))")
        }
    }

    /// Sends `signal` (no effect once the child has been reaped).
    public func signal(_ signal: Int32) {
        _ = kill(pid, signal)
    }

    /// Waits for the child to exit (polling, so no thread is blocked) and returns its exit status
    /// (128 + the signal when a signal ended it). Throws when it is still running after `limit`.
    @discardableResult
    public func waitForExit(within limit: Duration = .seconds(5)) async throws -> Int32 {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            if reaped < 0, errno != EINTR { return -1 }  // already reaped
            guard clock.now < deadline else {
                throw DaemonProcessError(description: "\(path) (pid \(pid)) still runs after \(limit)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`; waits until it is gone.
    public func stop(grace: Duration = .seconds(5)) async {
        signal(SIGTERM)
        if (try? await waitForExit(within: grace)) == nil {
            signal(SIGKILL)
            _ = try? await waitForExit()
        }
    }
}

public struct DaemonProcessError: Error, Sendable, CustomStringConvertible {
    public var description: String
}
