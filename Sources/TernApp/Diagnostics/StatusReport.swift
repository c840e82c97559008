import Foundation
import TernCore
import TernGateway
import TernMetrics

/// What a running `tern run` publishes for `tern status`: written to `status_file` (on tmpfs by
/// default: `/run/tern`, so the SD card is not worn) every few seconds, read by another process.
public struct StatusReport: Sendable, Hashable, Codable {
    /// When the daemon wrote this report, and when it started.
    public var updated: Date
    public var started: Date
    public var pid: Int32
    public var device: String
    /// The serial link to the receiver, e.g. "connected", "gone".
    public var receiverLink: String
    /// True when the board has no way to switch the receiver off (`power.method = "none"`).
    public var alwaysPowered: Bool
    public var gateway: GatewayStatus
    public var uplink: ForwarderStatus
    /// Positions waiting in the queue (nil when it could not be counted).
    public var queueDepth: Int?
    /// Conditions the daemon retries around (`ServiceProblems`); nil when there are none (and in
    /// reports from before they were published).
    public var problems: [String]?

    public init(
        updated: Date, started: Date, pid: Int32, device: String, receiverLink: String, alwaysPowered: Bool,
        gateway: GatewayStatus, uplink: ForwarderStatus, queueDepth: Int?, problems: [String]? = nil
    ) {
        self.updated = updated
        self.started = started
        self.pid = pid
        self.device = device
        self.receiverLink = receiverLink
        self.alwaysPowered = alwaysPowered
        self.gateway = gateway
        self.uplink = uplink
        self.queueDepth = queueDepth
        self.problems = problems
    }

    /// The report as `tern status --json` prints it and the file holds it.
    public func json() throws -> Data {
        try JSONOutput.encoder(snakeCaseKeys: true, dates: .iso8601).encode(self)
    }

    public static func decode(_ data: Data) throws -> StatusReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(StatusReport.self, from: data)
    }
}

/// Reads and writes the report file. Writes are atomic and not fsynced (`ReplacedFile`): a reader
/// never sees half a report, and the card is not worn for a report the next one replaces.
public struct StatusFile: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public func write(_ report: StatusReport) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try ReplacedFile.write(Array(try report.json()), to: path)
    }

    /// The report, or nil when there is no file (the daemon never ran with this `status_file`).
    public func read() throws -> StatusReport? {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) {
                throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            return nil
        }
        return try StatusReport.decode(data)
    }
}

extension Pipeline {
    /// The report for this running pipeline at `now`.
    /// What the watchdog judges progress by (`ProgressWatch`), at `now` since start.
    public func progressSample(now: Duration) async -> ProgressWatch.Sample {
        let uplink = forwarder.status()
        let waiting = ["idle", "backingOff", "blocked", "stopped"].contains { uplink.state.hasPrefix($0) }
        return ProgressWatch.Sample(
            now: now, receiverOn: await gateway.status().receiverPowered, linkConnected: receiver.linkState == .connected,
            bytesRead: receiver.stats.bytes, forwarderBusy: !waiting, forwarderState: uplink.state,
            forwarderActivity: uplink.batchesSent + uplink.failedAttempts + uplink.uploaded)
    }

    public func statusReport(config: TernConfig, started: Date, problems: [String] = [], now: Date = Date()) async -> StatusReport {
        StatusReport(
            updated: now, started: started, pid: ProcessInfo.processInfo.processIdentifier, device: config.device,
            receiverLink: "\(receiver.linkState)", alwaysPowered: config.power == .none,
            gateway: await gateway.status(), uplink: forwarder.status(), queueDepth: try? await queue.count(),
            problems: problems.isEmpty ? nil : problems)
    }
}
