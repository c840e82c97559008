import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `chronyc -n -c tracking`, parsed: what chronyd synchronises the clock to.
public struct ChronyTracking: Sendable, Hashable {
    /// The reference's ID in hex (`47505300` is "GPS": a refclock's refid in ASCII), `00000000` when none.
    public var referenceID: String
    /// The reference's name: a refclock's refid (`GPS`), a server's address (with -n).
    public var reference: String
    public var stratum: Int
    /// How far the system clock is ahead of chrony's reference time, seconds (negative: behind).
    public var systemTimeOffset: Double
    /// `Normal`, `Insert second`, `Delete second`, or `Not synchronised`.
    public var leapStatus: String

    public var isSynchronised: Bool { referenceID != "00000000" && leapStatus != "Not synchronised" }

    /// Parses the CSV line (`-c`); nil when it is not one.
    public init?(csv: String) {
        let fields = csv.split(separator: "\n").first.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
        guard fields.count >= 14, let stratum = Int(fields[2]), let offset = Double(fields[4]) else { return nil }
        referenceID = fields[0]
        reference = fields[1]
        self.stratum = stratum
        // The CSV gives the correction chronyd would apply (negative: the clock is fast).
        systemTimeOffset = -offset
        leapStatus = fields[13]
    }
}

/// One line of `chronyc -n -c sources`.
public struct ChronySource: Sendable, Hashable {
    /// `^` server, `=` peer, `#` reference clock.
    public var mode: Character
    /// `*` selected, `+` combined, `-` not combined, `?` unusable, `x` falseticker, `~` too variable.
    public var state: Character
    public var name: String
    /// The reachability register: the last 8 polls, newest in bit 0 (octal in chronyc's output).
    public var reach: Int

    public var isRefclock: Bool { mode == "#" }
    public var isSelected: Bool { state == "*" }

    /// Every source in the CSV output.
    public static func parse(csv: String) -> [ChronySource] {
        csv.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 6, let mode = fields[0].first, let state = fields[1].first, let reach = Int(fields[5], radix: 8) else { return nil }
            return ChronySource(mode: mode, state: state, name: String(fields[2]), reach: reach)
        }
    }
}

/// `tern doctor`'s clock lines: what the system clock is synchronised to (chrony: the receiver, through
/// Tern's `[time] chrony_socket`, or an NTP server; else the kernel's word), and, with `chrony_socket`
/// set, whether chronyd listens there with a refclock.
public struct ClockSourceCheck: Sendable {
    /// The refid of the `refclock SOCK` line Tern ships (docs/time.md).
    public static let refid = "GPS"

    public var chronySocket: String?
    /// Whether the kernel says the clock is synchronised (adjtimex).
    public var kernelSynchronised: Bool
    /// `chronyc -n -c tracking` and `… sources`; nil when chronyc is missing or chronyd does not answer.
    public var tracking: String?
    public var sources: String?
    /// Whether a socket exists at a path; whether this process may send to it.
    public var isSocket: @Sendable (String) -> Bool
    public var isWritable: @Sendable (String) -> Bool

    public init(
        chronySocket: String?, kernelSynchronised: Bool, tracking: String?, sources: String?,
        isSocket: @escaping @Sendable (String) -> Bool = ClockSourceCheck.isSocket,
        isWritable: @escaping @Sendable (String) -> Bool = { access($0, W_OK) == 0 }
    ) {
        self.isWritable = isWritable
        self.chronySocket = chronySocket
        self.kernelSynchronised = kernelSynchronised
        self.tracking = tracking
        self.sources = sources
        self.isSocket = isSocket
    }

    public static let isSocket: @Sendable (String) -> Bool = { path in
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    public func run() -> [DoctorCheck] {
        let tracking = tracking.flatMap(ChronyTracking.init(csv:))
        let sources = self.sources.map(ChronySource.parse(csv:)) ?? []
        var checks = [clock(tracking, sources: sources)]
        if let chronySocket { checks.append(refclock(chronySocket, running: tracking != nil, sources: sources)) }
        return checks
    }

    private func clock(_ tracking: ChronyTracking?, sources: [ChronySource]) -> DoctorCheck {
        let receiverFix = chronySocket == nil
            ? "set [time] chrony_socket so that chrony can take the time from the receiver without a network (docs/time.md)"
            : "chrony takes the receiver's time once a fix comes (see `chrony refclock`)"
        guard let tracking else {
            return kernelSynchronised
                ? DoctorCheck("clock", .ok, "synchronised (not by chrony: systemd-timesyncd or ntpd)")
                : DoctorCheck(
                    "clock", .warn, "not synchronised, and chrony does not answer",
                    fix: "fixes are still dated by the receiver; apt install chrony, and \(receiverFix)")
        }
        guard tracking.isSynchronised else {
            return DoctorCheck(
                "clock", .warn, "not synchronised: chrony has no usable source yet (chronyc sources)",
                fix: "fixes are still dated by the receiver; \(receiverFix), or bring the network up for NTP")
        }
        let offset = String(format: "%+.3f s", tracking.systemTimeOffset)
        if tracking.reference == Self.refid, sources.contains(where: { $0.isRefclock && $0.name == Self.refid }) {
            let through = chronySocket == nil ? "" : " through \(chronySocket ?? "")"
            return DoctorCheck("clock", .ok, "synchronised by chrony to GPS (Tern's receiver\(through)), system clock \(offset)")
        }
        if sources.contains(where: { $0.isRefclock && $0.name == tracking.reference }) {
            return DoctorCheck("clock", .ok, "synchronised by chrony to reference clock \(tracking.reference), system clock \(offset)")
        }
        return DoctorCheck("clock", .ok, "synchronised by chrony to NTP server \(tracking.reference) (stratum \(tracking.stratum)), system clock \(offset)")
    }

    private func refclock(_ path: String, running: Bool, sources: [ChronySource]) -> DoctorCheck {
        let snippet = "refclock SOCK \(path) refid \(Self.refid)"
        guard running else {
            return DoctorCheck(
                "chrony refclock", .warn, "[time] chrony_socket is \(path) but chronyd does not answer",
                fix: "apt install chrony; put `\(snippet) …` in /etc/chrony/conf.d/tern.conf (docs/time.md)")
        }
        guard isSocket(path) else {
            return DoctorCheck(
                "chrony refclock", .fail, "chronyd runs but there is no socket at \(path): its config has no `\(snippet)`",
                fix: "add it to /etc/chrony/conf.d/tern.conf and systemctl restart chrony (docs/time.md)")
        }
        guard isWritable(path) else {
            return DoctorCheck(
                "chrony refclock", .fail, "\(path) exists but uid \(getuid()) may not write to it: chronyd creates it root-owned",
                fix: "install the chrony.service drop-in that gives it to group tern (docs/time.md)")
        }
        guard let source = sources.first(where: { $0.isRefclock && $0.name == Self.refid }) else {
            return DoctorCheck(
                "chrony refclock", .warn, "\(path) exists but chrony lists no reference clock \(Self.refid)",
                fix: "the SOCK line in /etc/chrony/conf.d/tern.conf must say `refid \(Self.refid)`")
        }
        let reach = source.reach == 0 ? "no sample yet (the receiver has had no fix since chronyd started, or is off)" : "reach \(String(source.reach, radix: 8))"
        return DoctorCheck("chrony refclock", .ok, "chronyd listens on \(path) as \(Self.refid): \(reach)")
    }
}

extension ClockSourceCheck {
    /// Runs `chronyc -n -c ARGUMENTS` (killed after `timeout`); its output when it succeeded, else nil
    /// (chronyc missing, chronyd not running).
    public static func chronyc(_ arguments: [String], timeout: Duration = .seconds(5)) async -> String? {
        let candidates = ["/usr/bin/chronyc", "/usr/sbin/chronyc", "/bin/chronyc"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-n", "-c"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            if process.isRunning { process.terminate() }
        }
        let data = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        process.waitUntilExit()
        watchdog.cancel()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
