import Foundation
import TernCore
import TernMetrics
import TernStore

#if canImport(Glibc)
import Glibc
#endif

/// One line of `tern doctor`: what was checked, how it went, and what to do about it.
public struct DoctorCheck: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable {
        case ok, warn, fail
    }

    public var name: String
    public var status: Status
    public var detail: String
    /// What to do (empty when ok).
    public var fix: String

    public init(_ name: String, _ status: Status, _ detail: String, fix: String = "") {
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }

    public var line: String {
        let label = status == .fail ? "FAIL" : status.rawValue
        return label.padding(toLength: 5, withPad: " ", startingAt: 0) + "\(name): \(detail)" + (fix.isEmpty ? "" : " — \(fix)")
    }
}

/// `tern doctor`: everything a person logged in over SSH would check, in order, each with the fix.
/// The checks read the system through `DoctorSystem` (real paths; tests point it elsewhere).
public struct Doctor: Sendable {
    /// Where the doctor looks (all real by default).
    public struct System: Sendable {
        public var procRoot = "/proc"
        /// The kernel command line (a serial console on the receiver's UART steals its bytes).
        public var cmdline = "/proc/cmdline"
        /// Probes a GPIO line: nil free, the consumer when held, or throws when chip/line are missing.
        public var probeGPIO: @Sendable (_ chip: String, _ line: TernConfig.GPIOLineSpec) -> GPIOProbe = { _, _ in .missingChip }
        /// Whether the system clock is synchronised (adjtimex).
        public var clockSynchronised: @Sendable () -> Bool = { false }
        /// Opens the UART and reads for a while: (bytes, valid sentences, checksum errors), or an error.
        public var sampleUART: @Sendable (_ device: String, _ baud: Int) async -> UARTSample = { _, _ in .failed("not sampled") }
        /// Resolves and connects to host:port (and verifies TLS for https/mqtts): nil when it answers, else why not.
        public var reach: @Sendable (_ url: URL, _ caFile: String?) async -> String? = { _, _ in "not checked" }
        public var now: @Sendable () -> Date = { Date() }
        /// `chronyc -n -c ARGS`'s output; nil when chronyc is missing or chronyd does not answer.
        public var chronyc: @Sendable (_ arguments: [String]) async -> String? = { _ in nil }

        public init() {}
    }

    public enum GPIOProbe: Sendable, Hashable {
        case free
        case held(by: String)
        case missingChip
        case missingLine
    }

    public enum UARTSample: Sendable, Hashable {
        case read(bytes: Int, sentences: Int, checksumErrors: Int)
        case failed(String)
    }

    public let config: TernConfig
    public let configPath: String
    public let system: System

    public init(config: TernConfig, configPath: String, system: System) {
        self.config = config
        self.configPath = configPath
        self.system = system
    }

    /// Exit 0 all ok, 1 any FAIL, 2 only warnings.
    public static func exitCode(_ checks: [DoctorCheck]) -> Int32 {
        if checks.contains(where: { $0.status == .fail }) { return 1 }
        return checks.contains(where: { $0.status == .warn }) ? 2 : 0
    }

    public func run() async -> [DoctorCheck] {
        var checks = [configCheck()]
        let report = try? StatusFile(path: config.statusFile).read()
        let daemonPid = report.flatMap { StatusHealth.isTernProcess($0.pid) ? $0.pid : nil }
        if case let .serial(device, baud) = config.receiver {
            checks += await uartChecks(device: device, baud: baud, daemon: daemonPid)
        }
        checks += gpioChecks(daemon: daemonPid != nil)
        checks += dataChecks()
        checks.append(daemonCheck(report))
        if let directory = config.metrics.textfileDirectory {
            checks.append(metricsCheck(directory: directory, daemonRunning: daemonPid != nil))
        }
        checks += ClockSourceCheck(
            chronySocket: config.time.chronySocket, kernelSynchronised: system.clockSynchronised(),
            tracking: await system.chronyc(["tracking"]), sources: await system.chronyc(["sources"])).run()
        checks.append(await uplinkCheck())
        return checks
    }

    // MARK: - Checks

    func configCheck() -> DoctorCheck {
        let placeholders = config.placeholders
        if !placeholders.isEmpty {
            return DoctorCheck(
                "config", .fail, "not configured for this tracker, so tern.service will not start (tern config gate): " + placeholders.joined(separator: "; "),
                fix: "edit \(configPath), then systemctl start tern")
        }
        let warnings = config.warnings
        return warnings.isEmpty
            ? DoctorCheck("config", .ok, "\(configPath) is valid")
            : DoctorCheck("config", .warn, warnings.joined(separator: "; "), fix: "edit \(configPath) (tern config check)")
    }

    func uartChecks(device: String, baud: Int, daemon: Int32?) async -> [DoctorCheck] {
        guard let resolved = Self.resolve(device) else {
            return [DoctorCheck(
                "uart", .fail, "\(device) does not exist",
                fix: "enable the UART (Raspberry Pi OS: enable_uart=1 in config.txt, reboot) or set receiver.device")]
        }
        var checks: [DoctorCheck] = []
        let name = (resolved as NSString).lastPathComponent
        if name == "ttyAMA10" {
            checks.append(DoctorCheck(
                "uart", .fail, "\(device) is \(resolved), the Pi 5's debug connector, not the GPIO header",
                fix: "add dtparam=uart0=on to config.txt and set receiver.device = \"/dev/ttyAMA0\""))
        } else if name == "ttyS0" {
            checks.append(DoctorCheck(
                "uart", .warn, "\(device) is \(resolved), the mini UART (its baud rate follows the core clock)",
                fix: "use the PL011: dtoverlay=disable-bt (or miniuart-bt) in config.txt"))
        } else {
            checks.append(DoctorCheck("uart", .ok, "\(device) → \(resolved)"))
        }
        if let cmdline = try? String(contentsOfFile: system.cmdline, encoding: .utf8),
           let console = cmdline.split(separator: " ").first(where: { $0.hasPrefix("console=") && Self.consoleNames($0, device: device, resolved: name) })
        {
            checks.append(DoctorCheck(
                "serial console", .fail, "the kernel command line has \(console): a login console shares the receiver's UART",
                fix: "remove \(console) from /boot/firmware/cmdline.txt (raspi-config: Interface → Serial → no login shell) and reboot"))
        } else {
            checks.append(DoctorCheck("serial console", .ok, "none on \(name)"))
        }
        let scan = Self.scanHolders(of: resolved, procRoot: system.procRoot)
        let holders = scan.holders.filter { $0.pid != getpid() }
        let others = holders.filter { $0.pid != daemon }
        if !others.isEmpty {
            let names = others.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ")
            checks.append(DoctorCheck(
                "uart holders", .fail, "\(device) is open in \(names)",
                fix: "stop it (gpsd: systemctl disable --now gpsd.socket gpsd) so that only tern reads the receiver"))
        } else if let daemon, holders.contains(where: { $0.pid == daemon }) {
            checks.append(DoctorCheck("uart holders", .ok, "only the tern daemon (pid \(daemon))"))
        } else if scan.unreadable > 0 {
            checks.append(DoctorCheck(
                "uart holders", .warn, "none among the processes this user can inspect; \(scan.unreadable) others' open files are not readable",
                fix: "run sudo tern doctor: gpsd and other services run as root"))
        } else {
            checks.append(DoctorCheck("uart holders", .ok, "nobody"))
        }
        if daemon != nil {
            checks.append(DoctorCheck("nmea", .ok, "the daemon reads the receiver (see `daemon` below; tern nmea tail shows it live)"))
        } else if others.isEmpty {
            switch await system.sampleUART(resolved, baud) {
            case let .read(bytes, sentences, errors) where sentences > 0 && errors * 10 < sentences:
                checks.append(DoctorCheck("nmea", .ok, "\(sentences) valid sentences in \(bytes) bytes at \(baud) baud"))
            case let .read(bytes, sentences, errors) where bytes > 0:
                checks.append(DoctorCheck(
                    "nmea", .fail, "\(bytes) bytes but \(sentences) valid sentences (\(errors) bad) at \(baud) baud",
                    fix: "wrong baud rate? set receiver.baud, or receiver.autobaud = true"))
            case .read:
                checks.append(DoctorCheck(
                    "nmea", .fail, "no data at all in 3 s", fix: "check the receiver's power and the TX→RX wire; is it asleep (power.method)?"))
            case let .failed(reason):
                checks.append(DoctorCheck("nmea", .fail, reason, fix: "see `uart` above"))
            }
        }
        return checks
    }

    func gpioChecks(daemon: Bool) -> [DoctorCheck] {
        let lines: [(String, String, TernConfig.GPIOLineSpec)]
        switch config.power {
        case let .gpio(chip, line, _): lines = [("power line", chip, line)]
        case let .l76x(chip, standby, forceOn, _): lines = [("standby line", chip, standby), ("force-on line", chip, forceOn)]
        default: return []
        }
        return lines.map { name, chip, line in
            let label = "\(chip) line \(line)"
            switch system.probeGPIO(chip, line) {
            case .free: return DoctorCheck("gpio \(name)", .ok, "\(label) exists and is free")
            case let .held(by) where by == "tern" && daemon: return DoctorCheck("gpio \(name)", .ok, "\(label) held by the tern daemon")
            case let .held(by):
                return DoctorCheck("gpio \(name)", .fail, "\(label) is held by \"\(by)\"", fix: "stop that program, or pick another line in [power]")
            case .missingChip:
                return DoctorCheck(
                    "gpio \(name)", .fail, "no gpiochip \(chip)", fix: "check power.chip (gpiodetect lists the chips) and that the user is in group gpio")
            case .missingLine:
                return DoctorCheck("gpio \(name)", .fail, "\(chip) has no line \(line)", fix: "check the line in [power] (gpioinfo lists them)")
            }
        }
    }

    func dataChecks() -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let directory = config.dataDirectory
        var stats = statvfs()
        if !FileManager.default.fileExists(atPath: directory) {
            let parent = (directory as NSString).deletingLastPathComponent
            checks.append(
                access(parent.isEmpty ? "." : parent, W_OK) == 0
                    ? DoctorCheck("data directory", .warn, "\(directory) does not exist yet", fix: "tern run creates it")
                    : DoctorCheck(
                        "data directory", .fail, "\(directory) does not exist and \(parent) is not writable",
                        fix: "create it and give the tern user write access (install -d -o tern \(directory))"))
            return checks + [DoctorCheck("queue", .warn, "no queue yet at \(config.queuePath)", fix: "start the daemon (systemctl start tern)")]
        }
        if access(directory, W_OK) != 0 {
            checks.append(DoctorCheck(
                "data directory", .fail, "\(directory) is not writable (\(String(cString: strerror(errno))))",
                fix: "create it and give the tern user write access (chown tern: \(directory))"))
        } else if statvfs(directory, &stats) == 0 {
            let free = Int(stats.f_bavail) * Int(stats.f_frsize)
            let total = Int(stats.f_blocks) * Int(stats.f_frsize)
            let text = "\(directory): \(free / 1_048_576) MiB free of \(total / 1_048_576) MiB"
            if free < 16 << 20 || free * 100 < total {
                checks.append(DoctorCheck("data directory", .fail, text, fix: "free space on that file system: positions wait in memory meanwhile"))
            } else {
                checks.append(DoctorCheck("data directory", .ok, text))
            }
        }
        if FileManager.default.fileExists(atPath: config.queuePath) {
            do {
                let result = try QueueReader(path: config.queuePath).quickCheck()
                checks.append(
                    result == ["ok"]
                        ? DoctorCheck("queue", .ok, "\(config.queuePath) passes quick_check")
                        : DoctorCheck(
                            "queue", .fail, "quick_check: \(result.joined(separator: "; "))",
                            fix: "restart tern: it moves a damaged queue aside and salvages what reads"))
            } catch {
                checks.append(DoctorCheck("queue", .fail, "\(error)", fix: "restart tern: it moves a damaged queue aside and salvages what reads"))
            }
        } else {
            checks.append(DoctorCheck("queue", .warn, "no queue yet at \(config.queuePath)", fix: "start the daemon (systemctl start tern)"))
        }
        return checks
    }

    /// `[metrics] textfile_dir`: the directory exists, and a running daemon keeps `tern.prom` fresh.
    func metricsCheck(directory: String, daemonRunning: Bool) -> DoctorCheck {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return DoctorCheck(
                "metrics", .fail, "metrics.textfile_dir \(directory) does not exist",
                fix: "apt install prometheus-node-exporter (it creates \(TextfileExporter.debianDirectory)), or create the directory writable by the tern user")
        }
        let path = TextfileExporter(directory: directory).path
        let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        let limit = max(60, 3 * config.metrics.interval.seconds)
        guard daemonRunning else {
            return DoctorCheck("metrics", .ok, "\(directory) exists (the daemon writes tern.prom there while it runs)")
        }
        guard let modified, system.now().timeIntervalSince(modified) <= limit else {
            return DoctorCheck(
                "metrics", .warn, modified == nil ? "the daemon runs but \(path) is missing" : "\(path) is older than \(Int(limit)) s",
                fix: "journalctl -u tern -p warning says why; usually: setfacl -m u:tern:rwx \(directory)")
        }
        return DoctorCheck("metrics", .ok, "\(path) updated \(Int(system.now().timeIntervalSince(modified))) s ago")
    }

    func daemonCheck(_ report: StatusReport?) -> DoctorCheck {
        let health = StatusHealth.judge(
            report: report, queue: try? QueueReader(path: config.queuePath).stats(), now: system.now(),
            processAlive: StatusHealth.isTernProcess)
        switch health {
        case .healthy: return DoctorCheck("daemon", .ok, "running, report fresh (pid \(report?.pid ?? 0))")
        case let .notRunning(reason):
            return DoctorCheck("daemon", .fail, reason, fix: "systemctl start tern; journalctl -u tern -p warning")
        case let .degraded(problems):
            return DoctorCheck("daemon", .warn, problems.joined(separator: "; "), fix: "tern status shows the details")
        }
    }

    func uplinkCheck() async -> DoctorCheck {
        guard let url = config.uplink.url else { return DoctorCheck("uplink", .ok, "the simulated board's local collector") }
        if let problem = await system.reach(url, config.uplink.caFile) {
            return DoctorCheck(
                "uplink", .fail, "\(url.host ?? "?"): \(problem)",
                fix: "check uplink.url, the network (tern connectivity) and, for TLS, uplink.ca_file; positions stay queued meanwhile")
        }
        return DoctorCheck("uplink", .ok, "\(url.host ?? "?") answers\(["https", "mqtts"].contains(url.scheme ?? "") ? " and its certificate verifies" : "")")
    }

    // MARK: - System helpers

    /// The device behind a path (symlinks such as /dev/serial0 resolved), nil when missing.
    public static func resolve(_ device: String) -> String? {
        guard FileManager.default.fileExists(atPath: device) else { return nil }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: device)).map {
            $0.hasPrefix("/") ? $0 : ((device as NSString).deletingLastPathComponent as NSString).appendingPathComponent($0)
        }.map { ($0 as NSString).standardizingPath } ?? device
    }

    /// Whether a `console=NAME[,BAUD]` names the receiver's UART.
    static func consoleNames(_ argument: Substring, device: String, resolved: String) -> Bool {
        let console = argument.dropFirst("console=".count).split(separator: ",").first.map(String.init) ?? ""
        return console == resolved || console == (device as NSString).lastPathComponent || (console == "serial0" && device.hasSuffix("serial0"))
    }

    /// Processes with `path` open: (pid, command name), from /proc/*/fd.
    public static func holders(of path: String, procRoot: String) -> [(pid: Int32, name: String)] {
        scanHolders(of: path, procRoot: procRoot).holders
    }

    /// Processes with `path` open, and how many processes' descriptors could not be read (another
    /// user's, without root; a sandbox with `ProtectProc=invisible` does not even list them).
    public static func scanHolders(of path: String, procRoot: String) -> (holders: [(pid: Int32, name: String)], unreadable: Int) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: procRoot) else { return ([], 0) }
        var result: [(Int32, String)] = []
        var unreadable = 0
        for entry in entries {
            guard let pid = Int32(entry) else { continue }
            let fds = "\(procRoot)/\(entry)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: fds) else {
                if FileManager.default.fileExists(atPath: "\(procRoot)/\(entry)/comm") { unreadable += 1 }
                continue
            }
            if descriptors.contains(where: { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\($0)")) == path }) {
                let name = (try? String(contentsOfFile: "\(procRoot)/\(entry)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                result.append((pid, name))
            }
        }
        return (result.sorted { $0.0 < $1.0 }, unreadable)
    }
}
