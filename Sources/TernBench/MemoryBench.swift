import ArgumentParser
import Foundation
import TernCore
import TernTesting

#if canImport(Glibc)
import Glibc
#endif

/// `tern-bench memory`: what a running daemon costs in memory, measured as on the board.
struct MemoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Resident memory of `tern run` after it has run for a while.",
        discussion: """
            Starts TERN run --config CONFIG (default: the simulated board, which runs the whole pipeline: \
            PTY receiver, scheduler, filter, SQLite queue, uplink to the local collector), waits --seconds, \
            reads VmRSS, RssAnon, RssFile and VmHWM from /proc/PID/status, stops it with SIGTERM and prints \
            JSON. Also says whether the Swift runtime is linked statically (no libswiftCore.so mapped).
            """)

    @Option(help: "The tern executable to measure (e.g. a stripped, --static-swift-stdlib release build).")
    var tern = ".build/release/tern"

    @Option(help: "Config to run it with; its data_dir and status_file are replaced by a temporary directory.")
    var config = "board/simulated.toml"

    @Option(help: "Seconds to let it run before reading its memory.")
    var seconds = 60.0

    func run() async throws {
        let directory = NSTemporaryDirectory() + "tern-bench-memory-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try String(contentsOfFile: config, encoding: .utf8)
        let overrides = "data_dir = \"\(directory)\"\nstatus_file = \"\(directory)/status.json\"\ncontrol_socket = \"\(directory)/control.sock\"\n"
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { line in !["data_dir", "status_file", "control_socket"].contains { line.hasPrefix($0) } }
        try (overrides + kept.joined(separator: "\n")).write(toFile: directory + "/tern.toml", atomically: true, encoding: .utf8)

        let daemon = try DaemonProcess(tern, ["run", "--config", directory + "/tern.toml"], output: directory + "/tern.log")
        try await Task.sleep(for: .seconds(seconds))
        let status = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
        let maps = (try? String(contentsOfFile: "/proc/\(daemon.pid)/maps", encoding: .utf8)) ?? ""
        daemon.signal(SIGTERM)
        let exit = try await daemon.waitForExit(within: .seconds(20))
        guard !status.isEmpty else {
            throw ValidationError("tern exited before --seconds passed; its log: \(directory)/tern.log")
        }
        func kB(_ field: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
                .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: tern))?[.size] as? Int
        let report = MemoryReport(
            tern: tern, config: config, seconds: seconds, binaryBytes: size, swiftRuntimeStatic: !maps.contains("libswiftCore.so"),
            vmRssKb: kB("VmRSS"), rssAnonKb: kB("RssAnon"), rssFileKb: kB("RssFile"), vmHwmKb: kB("VmHWM"), exitStatus: exit)
        let encoder = JSONOutput.encoder(snakeCaseKeys: true)
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }
}

/// What `tern-bench memory` prints.
struct MemoryReport: Encodable {
    var benchmark = "memory"
    var tern: String
    var config: String
    var seconds: Double
    var binaryBytes: Int?
    /// No `libswiftCore.so` mapped: the Swift runtime is linked into the binary.
    var swiftRuntimeStatic: Bool
    var vmRssKb: Int?
    var rssAnonKb: Int?
    var rssFileKb: Int?
    var vmHwmKb: Int?
    var exitStatus: Int32
}
