// tern-bench: benchmarks that print one JSON object (see docs/measurements.md).
//
//   swift build -c release --product tern --product tern-bench   # or: swift build -c release
//   .build/release/tern-bench nmea [--size-mb 50] [--runs 3] [--tern PATH] [--gpsdecode PATH] [--corpus DIR]
//   .build/release/tern-bench latency [--cycles 100] [--baud 9600] [--speed 15] [--check]
//   .build/release/tern-bench queue [--dir DIR] [--rows 400] [--big-mb 100]
//   .build/release/tern-bench uplink [--positions 100000] [--trials 20]
//   .build/release/tern-bench timing [--trace FILE:MINUTES] [--phases 0,0.3,0.8,0.95] [--draws 100] [--max-lag 0.1]
//   .build/release/tern-bench policy [--traces DIR] [--receivers mt3339,ublox-m8] [--budget 30] [--max-interval 900] [--markdown] [--check]

import ArgumentParser
import Foundation
import TernCore

@main
struct TernBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tern-bench",
        abstract: "Benchmarks that print one JSON object.",
        subcommands: [NMEABench.self, PolicyBench.self, SeedsBench.self, BoundsBench.self, TimingBench.self, LatencyBench.self, QueueBench.self, UplinkBench.self, HostileBench.self, MemoryBench.self, WearBench.self])
}

struct NMEABench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nmea",
        abstract: "`tern nmea decode` against gpsd's `gpsdecode -j` on the same NMEA input.",
        discussion: """
            Concatenates the corpus logs (Tests/TernNMEATests/Corpus/*.log, in name order, comment \
            lines included) repeatedly into a temporary file of at least --size-mb MB (10^6 bytes). \
            Both tools read that same file: `tern nmea decode FILE > /dev/null` and \
            `gpsdecode -j < FILE > /dev/null`, alternately, --runs times each. Reports the best and \
            median wall time, sentences/s and MB/s from the best run, and the peak RSS of the child \
            (VmHWM of the child, sampled every ms; max over runs). One extra untimed run per tool writes the output to a \
            file to count its lines and TPV records. Input generation is not timed. Exits 2 when \
            gpsdecode or tern is missing.
            """)

    @Option(help: "Input size in MB (10^6 bytes); the corpus is repeated until the input is at least this big.")
    var sizeMb: Double = 50

    @Option(help: "Timed runs per tool.")
    var runs = 3

    @Option(help: "The tern executable (default: `tern` beside tern-bench, i.e. the same build).")
    var tern: String?

    @Option(help: "The gpsdecode executable (default: from PATH; Debian package gpsd-clients).")
    var gpsdecode: String?

    @Option(help: "Directory of *.log NMEA recordings (default: Tests/TernNMEATests/Corpus).")
    var corpus: String = "Tests/TernNMEATests/Corpus"

    @Flag(help: "Keep the generated input file and print its path on stderr.")
    var keepInput = false

    func validate() throws {
        guard sizeMb > 0 else { throw ValidationError("--size-mb must be positive") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    func run() throws {
        guard let gpsdecodePath = gpsdecode.map(absolute) ?? which("gpsdecode"), isExecutable(gpsdecodePath) else {
            fail("gpsdecode not found\(gpsdecode.map { " at \($0)" } ?? " in PATH"): apt-get install gpsd-clients", code: 2)
        }
        let ternPath = tern.map(absolute) ?? siblingExecutable("tern")
        guard isExecutable(ternPath) else {
            fail("tern not found at \(ternPath): build it first (swift build -c release) or pass --tern PATH", code: 2)
        }

        let input = try Input.make(corpus: corpus, minimumBytes: Int(sizeMb * 1_000_000))
        defer {
            if keepInput {
                FileHandle.standardError.write(Data("tern-bench: input kept at \(input.path)\n".utf8))
            } else {
                try? FileManager.default.removeItem(atPath: input.path)
            }
        }

        let ternTool = Tool(name: "tern", path: ternPath, arguments: ["nmea", "decode", input.path], stdin: "/dev/null")
        let gpsdTool = Tool(name: "gpsdecode", path: gpsdecodePath, arguments: ["-j"], stdin: input.path)
        let tools = [ternTool, gpsdTool]
        let loadBefore = loadAverage()
        var measurements = Dictionary(uniqueKeysWithValues: tools.map { ($0.name, [ChildRun]()) })
        for _ in 0..<runs {
            for tool in tools {
                let run = try runChild(tool.path, tool.arguments, stdin: tool.stdin, stdout: "/dev/null")
                guard run.exitStatus == 0 else {
                    fail("\(tool.name) exited with status \(run.exitStatus): \(tool.commandLine)", code: 1)
                }
                measurements[tool.name, default: []].append(run)
            }
        }

        func result(_ tool: Tool) throws -> ToolResult {
            ToolResult(command: tool.commandLine, runs: measurements[tool.name, default: []], input: input, output: try countOutput(of: tool))
        }
        let ternResult = try result(ternTool), gpsdResult = try result(gpsdTool)
        let throughputRatio = ternResult.sentencesPerSecond / gpsdResult.sentencesPerSecond
        let rssRatio = Double(ternResult.peakRSS) / Double(gpsdResult.peakRSS)

        let report: [String: Any] = [
            "benchmark": "nmea-decode",
            "input": [
                "bytes": input.bytes,
                "mb": round(Double(input.bytes) / 1e6, 2),
                "sentences": input.sentences,
                "lines": input.lines,
                "comment_lines": input.commentLines,
                "corpus_files": input.files,
                "corpus_repeats": input.repeats,
            ] as [String: Any],
            "runs": runs,
            "tern": ternResult.json,
            "gpsdecode": gpsdResult.json.merging(["version": version(of: gpsdecodePath)]) { a, _ in a },
            "ratios": [
                "throughput_tern_over_gpsdecode": round(throughputRatio, 2),
                "peak_rss_tern_over_gpsdecode": round(rssRatio, 2),
            ],
            "goal": [
                "throughput_ratio_at_least": 4,
                "peak_rss_ratio_at_most": 1,
                "met": throughputRatio >= 4 && rssRatio <= 1,
            ] as [String: Any],
            "host": [
                "cpus": ProcessInfo.processInfo.activeProcessorCount, "os": osName(),
                // Anything else running skews wall times: check this is near 0 before quoting figures.
                "loadavg_1m_before": loadBefore,
            ] as [String: Any],
        ]
        let data = try JSONOutput.data(report)
        print(String(decoding: data, as: UTF8.self))
    }

    /// An untimed run writing to a file: output lines, bytes, and lines that are gpsd TPV records.
    private func countOutput(of tool: Tool) throws -> OutputCount {
        let path = NSTemporaryDirectory() + "tern-bench-\(tool.name)-\(getpid()).out"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try runChild(tool.path, tool.arguments, stdin: tool.stdin, stdout: path)
        guard run.exitStatus == 0 else { fail("\(tool.name) exited with status \(run.exitStatus)", code: 1) }
        guard let handle = FileHandle(forReadingAtPath: path) else { fail("cannot read \(path)", code: 1) }
        defer { try? handle.close() }
        var count = OutputCount()
        var line: [UInt8] = []
        let tpvClass = Array(#""class":"TPV""#.utf8)
        func finishLine() {
            count.lines += 1
            // tern prints only fixes (gpsd's TPV fields, no "class"); gpsdecode tags its records.
            if tool.name == "tern" ? line.first == UInt8(ascii: "{") : line.contains(subsequence: tpvClass) {
                count.fixRecords += 1
            }
            line.removeAll(keepingCapacity: true)
        }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            count.bytes += chunk.count
            for byte in chunk {
                if byte == UInt8(ascii: "\n") { finishLine() } else if line.count < 64 { line.append(byte) }
            }
        }
        if !line.isEmpty { finishLine() }
        return count
    }
}

struct Tool {
    var name: String
    var path: String
    var arguments: [String]
    var stdin: String

    var commandLine: String {
        ([path] + arguments).joined(separator: " ") + (stdin == "/dev/null" ? "" : " < \(stdin)") + " > /dev/null"
    }
}

struct OutputCount {
    var lines = 0
    var bytes = 0
    /// tern: JSON fix lines; gpsdecode: `"class":"TPV"` lines.
    var fixRecords = 0
}

struct ToolResult {
    var command: String
    var runs: [ChildRun]
    var input: Input
    var output: OutputCount

    var best: Double { runs.map(\.wallSeconds).min() ?? 0 }
    var median: Double { Statistics.median(runs.map(\.wallSeconds)) }
    var peakRSS: Int { runs.map(\.peakRSSBytes).max() ?? 0 }
    var sentencesPerSecond: Double { Double(input.sentences) / best }

    var json: [String: Any] {
        [
            "command": command,
            "wall_s_best": round(best, 3),
            "wall_s_median": round(median, 3),
            "wall_s_all": runs.map { round($0.wallSeconds, 3) },
            "sentences_per_s": Int(sentencesPerSecond.rounded()),
            "mb_per_s": round(Double(input.bytes) / 1e6 / best, 2),
            "peak_rss_mb": round(Double(peakRSS) / 1_048_576, 2),
            "output_lines": output.lines,
            "output_bytes": output.bytes,
            "fix_records": output.fixRecords,
        ]
    }
}

func round(_ value: Double, _ places: Int) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("tern-bench: \(message)\n".utf8))
    exit(code)
}

func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

func isExecutable(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }

func which(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first(where: isExecutable)
}

/// `name` in the directory of the running executable (SwiftPM puts all products of a build there).
func siblingExecutable(_ name: String) -> String {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (absolute(me) as NSString).deletingLastPathComponent + "/" + name
}

func version(of path: String) -> String {
    let pipe = Pipe()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = ["-V"]
    process.standardOutput = pipe
    process.standardError = pipe
    guard (try? process.run()) != nil else { return "unknown" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The mount holding `path` (the longest mount point it starts with), from /proc/self/mounts.
func mountedFileSystem(of path: String) -> (point: String, type: String)? {
    guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
    var best: (point: String, type: String)?
    for line in mounts.split(separator: "\n") {
        let fields = line.split(separator: " ").map(String.init)
        guard fields.count > 2, path.hasPrefix(fields[1]), fields[1].count > (best?.point.count ?? -1) else { continue }
        best = (fields[1], fields[2])
    }
    return best
}

/// The 1-minute load average from /proc/loadavg (-1 when unavailable).
func loadAverage() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
        let first = text.split(separator: " ").first, let value = Double(first)
    else { return -1 }
    return value
}

func osName() -> String {
    guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return "unknown" }
    for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
        return String(line.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
    return "unknown"
}

extension Array where Element == UInt8 {
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { start in self[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
