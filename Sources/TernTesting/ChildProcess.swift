import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, whose standard output is read line by line as it
/// comes (so a test can wait for a line, then kill the child at a chosen moment) and whose standard
/// error is kept. Blocking: use it from one thread (`ChildProcess.offload`), not from the
/// cooperative pool. Its pipes are close-on-exec, so processes other tests start at the same time
/// do not inherit them (and hold the child's output open); the child inherits no descriptor beyond
/// standard input, output and error.
public final class ChildProcess {
    /// How a child ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case let .exited(status): "exited with status \(status)"
            case let .signalled(signal): "killed by signal \(signal)"
            }
        }
    }

    /// What a finished child printed, and how it ended.
    public struct Result: Sendable {
        public var termination: Termination
        /// Complete lines of standard output (a last line cut short by a kill is left out).
        public var lines: [String]
        public var stderr: String
    }

    public let pid: pid_t
    private var output: Int32
    private var errors: Int32
    private var pending: [UInt8] = []
    private var errorBytes: [UInt8] = []
    private var lines: [String] = []
    private var termination: Termination?

    /// Starts `executable ARGUMENTS` with the environment of this process.
    public init(executable: URL, arguments: [String]) throws {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard Self.closeOnExecPipe(&outPipe) else { throw Self.failure("pipe") }
        guard Self.closeOnExecPipe(&errPipe) else {
            close(outPipe[0]); close(outPipe[1])
            throw Self.failure("pipe")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies the child keeps.
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // Nothing else: NIO opens its sockets without close-on-exec, and a child that inherited another
        // test's listening socket keeps its port bound after that test closed it (a collector going
        // online again on the same port then fails with EADDRINUSE).
        do {
            try DaemonProcess.closeInheritedDescriptors(&actions)
        } catch {
            close(outPipe[0]); close(outPipe[1]); close(errPipe[0]); close(errPipe[1])
            throw error
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable.path, &actions, nil, argv, environ)
        close(outPipe[1])
        close(errPipe[1])
        guard status == 0 else {
            close(outPipe[0]); close(errPipe[0])
            throw Self.failure("posix_spawn \(executable.path)", code: status)
        }
        pid = child
        output = outPipe[0]
        errors = errPipe[0]
    }

    deinit {
        if termination == nil {
            sendSignal(pid, SIGKILL)
            _ = reap()
        }
        if output >= 0 { close(output) }
        if errors >= 0 { close(errors) }
    }

    /// Reads until a complete line satisfies `predicate` (returns it), or the output ends or
    /// `timeout` passes (returns nil).
    public func waitForLine(timeout: Duration, where predicate: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var checked = 0
        while true {
            while checked < lines.count {
                defer { checked += 1 }
                if predicate(lines[checked]) { return lines[checked] }
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, output >= 0 else { return nil }
            pump(timeoutMilliseconds: Int32(min(1000, max(1, (left / .milliseconds(1)).rounded(.up)))))
        }
    }

    /// Sends `signal` (SIGKILL: the process ends at once, wherever it was).
    public func kill(_ signal: Int32 = SIGKILL) {
        guard termination == nil else { return }
        sendSignal(pid, signal)
    }

    /// Reads the output to its end and waits for the process to end.
    public func finish() -> Result {
        while output >= 0 || errors >= 0 { pump(timeoutMilliseconds: -1) }
        let ended = termination ?? reap()
        termination = ended
        return Result(termination: ended, lines: lines, stderr: String(decoding: errorBytes, as: UTF8.self))
    }

    /// Waits for data on either pipe and takes what is there.
    private func pump(timeoutMilliseconds: Int32) {
        var fds = [output, errors].filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard !fds.isEmpty else { return }
        let ready = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        guard ready > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        for entry in fds where entry.revents != 0 {
            let count = read(entry.fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if entry.fd == output {
                if count <= 0 {
                    close(output)
                    output = -1
                } else {
                    take(buffer[0..<count])
                }
            } else if count <= 0 {
                close(errors)
                errors = -1
            } else {
                errorBytes += buffer[0..<count]
            }
        }
    }

    private func take(_ bytes: ArraySlice<UInt8>) {
        pending += bytes
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }

    /// pipe2(O_CLOEXEC) is not imported into Swift: pipe, then the flag at once.
    private static func closeOnExecPipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private func reap() -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    private static func failure(_ call: String, code: Int32 = errno) -> NSError {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(call) failed: \(String(cString: strerror(code)))"])
    }

    /// Runs `body` on a thread of its own (it blocks: waits for children, sleeps) and returns its result.
    public static func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
        }
    }
}

private func sendSignal(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}
