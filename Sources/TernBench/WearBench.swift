import ArgumentParser
import Foundation
import TernCore
import TernApp
import TernTesting

#if canImport(Glibc)
import Glibc
#endif

/// `tern-bench wear`: what the daemon writes to the SD card, by source, per stored position and per day.
struct WearBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wear",
        abstract: "Bytes `tern run` writes to storage per stored position and per day, by source (SD card wear).",
        discussion: """
            Runs TERN run on the simulated board's shipped profile (--config; only data_dir, status_file, \
            control_socket, speed, seed and [metrics] textfile_dir replaced; the uplink is the profile's local \
            collector, so positions are acknowledged and deleted as in the field) for --hours simulated hours. \
            Each source gets its own ext4 file system on a loop device (image files under --dir, which must \
            be a real disk, not tmpfs): the data directory (the SQLite queue: WAL frames, checkpoints into \
            the database, the scheduler's memory), the status file, and the metrics textfile (as in \
            /var/lib/prometheus/node-exporter, on the card). What reaches each device (/sys/block/loopN/stat, \
            sectors written, after a syncfs at the end) counts data, ext4 metadata and its journal. Also \
            reports the daemon's /proc/PID/io write_bytes (the page-cache pages it dirtied: no metadata, \
            no journal, nothing written on its behalf by others) and its log output (what journald would \
            store). The status file and the metrics are rewritten on wall-clock timers: their bytes are \
            scaled per real second; the queue follows simulated time. Needs root (losetup, mount).
            """)

    @Option(help: "The tern executable (default: `tern` beside tern-bench, i.e. the same build).")
    var tern: String?

    @Option(help: "The board profile to run (its scheduler, filter, store and uplink are used as shipped).")
    var config = "board/simulated.toml"

    @Option(help: "Simulated hours to run.")
    var hours = 2.0

    @Option(help: "Simulated seconds per real second.")
    var speed = 60.0

    @Option(help: "The simulated receiver's seed.")
    var seed: UInt64 = 1

    @Option(help: "Directory on a real disk for the file system images (a temporary directory is made inside it).")
    var dir = FileManager.default.currentDirectoryPath

    @Flag(inversion: .prefixedNo, help: "Write the metrics textfile ([metrics] textfile_dir), as a tracker with node_exporter does.")
    var metrics = true

    @Option(help: "[metrics] interval (how often the textfile is rewritten); default: the daemon's.")
    var metricsInterval: String?

    @Option(help: "Store one position every this many (simulated) seconds instead of the profile's policy: [scheduler] policy = \"fixed\" at this interval, [filter] thinning = \"off\" (the 1 position / 10 s reference: --every 10).")
    var every: Int?

    @Option(help: "Mount options of the file systems (Raspberry Pi OS mounts its root with noatime; add lazytime to keep timestamp-only updates off the card).")
    var mountOptions = "noatime"

    @Flag(help: "Print a markdown table instead of JSON.")
    var markdown = false

    func validate() throws {
        guard hours > 0, speed > 0 else { throw ValidationError("--hours and --speed must be positive") }
    }

    func run() async throws {
        guard getuid() == 0 else { fail("wear needs root: it mounts one ext4 file system per source on loop devices (run it with sudo)", code: 2) }
        let ternPath = tern.map(absolute) ?? siblingExecutable("tern")
        guard isExecutable(ternPath) else { fail("tern not found at \(ternPath): build it first (swift build --product tern) or pass --tern PATH", code: 2) }
        let work = (absolute(dir) as NSString).appendingPathComponent("tern-bench-wear-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        if let kind = mountedFileSystem(of: work)?.type, kind == "tmpfs" || kind == "ramfs" {
            fail("--dir \(dir) is on tmpfs, which never reaches a block device: pass a directory on a real disk", code: 2)
        }

        var mounts: [LoopFileSystem] = []
        defer { for mount in mounts.reversed() { mount.detach() } }
        for name in ["data", "status", "metrics"] { mounts.append(try LoopFileSystem(work: work, name: name, options: mountOptions)) }
        let (data, status, metricsFS) = (mounts[0], mounts[1], mounts[2])

        let configPath = work + "/tern.toml"
        try profile(data: data.mountPoint, status: status.mountPoint, metrics: metricsFS.mountPoint).write(toFile: configPath, atomically: true, encoding: .utf8)
        let logPath = work + "/tern.log"
        let realSeconds = hours * 3600 / speed

        for mount in mounts { mount.sync() }
        let before = mounts.map(\.sectorsWritten)
        let started = monotonicSeconds()
        let daemon = try DaemonProcess(ternPath, ["run", "--config", configPath], output: logPath)
        var io = ProcessIO()
        while monotonicSeconds() - started < realSeconds {
            if let sample = ProcessIO(pid: daemon.pid) { io = sample } else { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        if let sample = ProcessIO(pid: daemon.pid) { io = sample }
        let report = (try? StatusFile(path: status.mountPoint + "/status.json").read()).flatMap { $0 }
            .map { (stored: $0.gateway.enqueued, delivered: $0.uplink.uploaded) }
        daemon.signal(SIGTERM)
        let exit = try await daemon.waitForExit(within: .seconds(30))
        let elapsed = monotonicSeconds() - started
        for mount in mounts { mount.sync() }
        let written = zip(mounts.map(\.sectorsWritten), before).map { ($0 - $1) * 512 }
        guard let report, report.stored > 0 else {
            fail("the daemon stored no position (exit \(exit)); its log: \(logPath)", code: 1)
        }

        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let logLines = log.split(separator: "\n").count
        let simulatedDays = elapsed * speed / 86400
        let realDays = elapsed / 86400
        let storedPerDay = Double(report.stored) / simulatedDays
        // One stored position every 10 s.
        let reference = 8640.0
        let sqlitePerPosition = Double(written[0]) / Double(report.stored)
        let statusPerDay = Double(written[1]) / realDays
        let metricsPerDay = Double(written[2]) / realDays
        // journald: each entry stores the message plus its own fields, timestamps and hash-chain objects.
        let journalPerEntry = 600.0
        let logPerDay = (Double(log.utf8.count) + journalPerEntry * Double(logLines)) / simulatedDays

        func perDay(_ sqlite: Double) -> [String: Int] {
            ["sqlite": Int(sqlite), "status_file": Int(statusPerDay), "metrics_textfile": Int(metricsPerDay), "journald_estimate": Int(logPerDay),
             "total": Int(sqlite + statusPerDay + metricsPerDay + logPerDay)]
        }
        let measuredDay = perDay(sqlitePerPosition * storedPerDay)
        let referenceDay = perDay(sqlitePerPosition * reference)
        let result = WearReport(
            tern: ternPath, config: config, mountOptions: mountOptions, every: every, simulatedHours: elapsed * speed / 3600, realSeconds: round(elapsed, 1), speed: speed, seed: seed,
            exitStatus: exit, storedPositions: report.stored, deliveredPositions: report.delivered,
            storedPerHour: round(storedPerDay / 24, 1), meanSecondsPerStoredPosition: round(86400 / storedPerDay, 1),
            deviceBytes: ["sqlite": written[0], "status_file": written[1], "metrics_textfile": written[2]],
            processWriteBytes: io.writeBytes, processCancelledWriteBytes: io.cancelledWriteBytes, processWriteCalls: io.writeCalls,
            logLines: logLines, logBytes: log.utf8.count,
            sqliteBytesPerStoredPosition: Int(sqlitePerPosition),
            sqliteBytesPerDeliveredPosition: report.delivered > 0 ? Int(Double(written[0]) / Double(report.delivered)) : nil,
            processWriteBytesPerStoredPosition: Int(Double(io.writeBytes) / Double(report.stored)),
            statusFileBytesPerRealHour: Int(Double(written[1]) / elapsed * 3600), metricsBytesPerRealHour: Int(Double(written[2]) / elapsed * 3600),
            bytesPerDayAtMeasuredRate: measuredDay, bytesPerDayAtOnePer10s: referenceDay,
            bytesPerPositionAtOnePer10s: referenceDay.mapValues { $0 / Int(reference) },
            bytesPerPositionAtOnePer10sOnThePi: ((referenceDay["total"] ?? 0) - (referenceDay["status_file"] ?? 0)) / Int(reference),
            journaldBytesPerEntryAssumed: Int(journalPerEntry))
        if markdown { print(result.markdown) } else {
            let encoder = JSONOutput.encoder(snakeCaseKeys: true)
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        }
    }

    /// The profile with only the paths, speed, seed and the metrics textfile directory replaced.
    private func profile(data: String, status: String, metrics metricsDirectory: String) throws -> String {
        let text = try String(contentsOfFile: config, encoding: .utf8)
        var lines: [String] = []
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") { section = trimmed }
            if section.isEmpty, ["data_dir", "status_file", "control_socket"].contains(where: { trimmed.hasPrefix($0) }) { continue }
            if section == "[receiver]", trimmed.hasPrefix("speed") || trimmed.hasPrefix("seed") { continue }
            if section == "[metrics]" { continue }
            if every != nil, section == "[scheduler]", ["policy", "interval", "error_budget_m", "min_interval", "max_interval"].contains(where: { trimmed.hasPrefix($0) }) { continue }
            if every != nil, section == "[filter]", trimmed.hasPrefix("thinning") { continue }
            lines.append(line)
            if trimmed == "[receiver]" { lines += ["speed = \(speed)", "seed = \(seed)"] }
            if let every, trimmed == "[scheduler]" { lines += ["policy = \"fixed\"", "interval = \"\(every)s\""] }
            if every != nil, trimmed == "[filter]" { lines += ["thinning = \"off\""] }
        }
        var head = "data_dir = \"\(data)\"\nstatus_file = \"\(status)/status.json\"\ncontrol_socket = \"\(data)/control.sock\"\n"
        var tail = ""
        if metrics {
            tail = "\n[metrics]\ntextfile_dir = \"\(metricsDirectory)\"\n" + (metricsInterval.map { "interval = \"\($0)\"\n" } ?? "")
        }
        head += lines.joined(separator: "\n")
        return head + tail
    }
}

/// What `tern-bench wear` prints.
struct WearReport: Encodable {
    var benchmark = "wear"
    var tern: String
    var config: String
    /// How the measured file systems were mounted (`--mount-options`).
    var mountOptions: String
    /// Seconds between stored positions asked for with `--every` (nil: the profile's policy).
    var every: Int?
    var simulatedHours: Double
    var realSeconds: Double
    var speed: Double
    var seed: UInt64
    var exitStatus: Int32
    var storedPositions: Int
    var deliveredPositions: Int
    var storedPerHour: Double
    var meanSecondsPerStoredPosition: Double
    /// Bytes that reached each source's block device (data, ext4 metadata and journal).
    var deviceBytes: [String: Int]
    /// The daemon's /proc/PID/io: pages it dirtied (all files), pages dirtied then truncated away, write calls.
    var processWriteBytes: Int
    var processCancelledWriteBytes: Int
    var processWriteCalls: Int
    var logLines: Int
    var logBytes: Int
    var sqliteBytesPerStoredPosition: Int
    var sqliteBytesPerDeliveredPosition: Int?
    var processWriteBytesPerStoredPosition: Int
    var statusFileBytesPerRealHour: Int
    var metricsBytesPerRealHour: Int
    var bytesPerDayAtMeasuredRate: [String: Int]
    var bytesPerDayAtOnePer10s: [String: Int]
    var bytesPerPositionAtOnePer10s: [String: Int]
    /// Everything but the status file, which a Pi keeps on tmpfs (/run/tern).
    var bytesPerPositionAtOnePer10sOnThePi: Int
    var journaldBytesPerEntryAssumed: Int

    var markdown: String {
        let sources = ["sqlite", "status_file", "metrics_textfile", "journald_estimate", "total"]
        var rows = [
            "| source | bytes/day (measured rate, \(storedPerHour) stored/h) | bytes/day at 1 position / 10 s | bytes/position at 1 / 10 s |",
            "|---|---:|---:|---:|",
        ]
        for source in sources {
            rows.append(
                "| \(source) | \(bytesPerDayAtMeasuredRate[source] ?? 0) | \(bytesPerDayAtOnePer10s[source] ?? 0) | \(bytesPerPositionAtOnePer10s[source] ?? 0) |")
        }
        rows.append("")
        rows.append(
            "\(storedPositions) stored, \(deliveredPositions) delivered in \(round(simulatedHours, 2)) simulated hours "
                + "(\(realSeconds) s at \(speed)x); SQLite \(sqliteBytesPerStoredPosition) B per stored position on its device, "
                + "write_bytes \(processWriteBytesPerStoredPosition) B per stored position (all files); "
                + "\(bytesPerPositionAtOnePer10sOnThePi) B per position on a Pi (status file on tmpfs).")
        return rows.joined(separator: "\n")
    }
}

/// The counts the daemon's status file reports.
/// /proc/PID/io of a running process.
struct ProcessIO {
    var writeBytes = 0
    var cancelledWriteBytes = 0
    var writeCalls = 0

    init() {}

    init?(pid: pid_t) { self.init(path: "/proc/\(pid)/io") }

    /// `/proc/self/io`: this process's own.
    static var ofSelf: ProcessIO? { ProcessIO(path: "/proc/self/io") }

    private init?(path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix(name + ":") }.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        writeBytes = field("write_bytes")
        cancelledWriteBytes = field("cancelled_write_bytes")
        writeCalls = field("syscw")
    }
}

/// An ext4 file system in an image file, on a loop device, mounted: what reaches it is what its device counts.
final class LoopFileSystem {
    let device: String
    let mountPoint: String

    init(work: String, name: String, options: String) throws {
        let image = "\(work)/\(name).img"
        mountPoint = "\(work)/\(name)"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, 256 << 20) == 0 else {
            throw ValidationError("cannot create \(image): \(String(cString: strerror(errno)))")
        }
        // Inode tables and the journal initialised now: no background initialisation counted as the daemon's.
        try command("/sbin/mkfs.ext4", ["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image])
        device = try command("/sbin/losetup", ["--find", "--show", image]).trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            try command("/bin/mount", ["-o", options, device, mountPoint])
        } catch {
            _ = try? command("/sbin/losetup", ["-d", device])
            throw error
        }
    }

    /// Sectors (512 B) written to the device since it was set up (field 7 of /sys/block/NAME/stat).
    var sectorsWritten: Int {
        let name = (device as NSString).lastPathComponent
        let text = (try? String(contentsOfFile: "/sys/block/\(name)/stat", encoding: .utf8)) ?? ""
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        return fields.count > 6 ? Int(fields[6]) ?? 0 : 0
    }

    /// Everything dirty on the file system written out (what the card would get within seconds anyway).
    func sync() {
        _ = try? command("/bin/sync", ["--file-system", mountPoint])
    }

    func detach() {
        _ = try? command("/bin/umount", [mountPoint])
        _ = try? command("/sbin/losetup", ["-d", device])
    }
}

/// Runs a tool to completion; its standard output, or an error naming it and what it printed.
@discardableResult
func command(_ path: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
        throw ValidationError("\(path) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
    }
    return text
}
