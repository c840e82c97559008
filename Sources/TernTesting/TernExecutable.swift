import Foundation
import Glibc

/// The `tern` binary SwiftPM built beside the test bundle, and a way to run it, for end-to-end tests.
public enum TernExecutable {
    /// Where `tern` is, or nil when it was not built (tests using it are then skipped with that reason).
    public static let url: URL? = {
        let beside = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "tern")
        let fromSource = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../.build/debug/tern")
        return [beside, fromSource].first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// How long a test waits for one `tern` command before killing it.
    public static let limit: Duration = .seconds(300)

    /// What a finished run printed and returned.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// A started `tern` whose output is being collected.
    public struct Running {
        public let process: Process
        private let out: Pipe
        private let err: Pipe

        fileprivate init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            self.out = out
            self.err = err
        }

        /// Waits for the process to end without blocking a cooperative thread.
        public func finish() async -> Result {
            let running = UncheckedBox(self)
            return (try? await TernExecutable.offload { running.value.finish() }) ?? Result(status: -1, stdout: "", stderr: "")
        }

        /// Waits for the process to end and returns its output. A process still running after
        /// `limit` is killed (SIGKILL) and its stderr says so: a test waits for a hung `tern` no
        /// longer than that, instead of forever.
        public func finish(within limit: Duration = TernExecutable.limit) -> Result {
            let process = process
            let watchdog = DispatchWorkItem { if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) } }
            DispatchQueue.global().asyncAfter(
                deadline: .now() + .milliseconds(Int(limit / .milliseconds(1))), execute: watchdog)
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            watchdog.cancel()
            let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
            return Result(
                status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                stderr: String(decoding: stderr, as: UTF8.self)
                    + (killed ? "\n[tern was killed: it did not finish within \(limit)]\n" : ""))
        }
    }

    /// Starts `tern ARGUMENTS` with stdout and stderr captured.
    public static func start(_ arguments: [String]) throws -> Running {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return Running(process: process, out: out, err: err)
    }

    /// Runs `tern ARGUMENTS` to the end.
    public static func run(_ arguments: [String]) throws -> Result {
        try start(arguments).finish()
    }

    /// Runs `tern ARGUMENTS` to the end on a thread of its own: an async test must not block one of
    /// the few cooperative threads (two on a 2-core machine) for the seconds a command takes.
    public static func run(_ arguments: [String]) async throws -> Result {
        try await offload { try run(arguments) }
    }

    /// Runs blocking `work` on a thread of its own and waits for it without blocking the caller's thread.
    public static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try work() }) }
        }
    }
}

/// Carries a value that is only used from one thread at a time across a thread hop.
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
