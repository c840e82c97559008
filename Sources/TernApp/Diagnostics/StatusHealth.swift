import Foundation
import TernCore
import TernGateway
import TernStore

/// How a tracker is doing, for `tern status`'s exit code: 0 healthy, 1 the daemon is not running (no
/// report, a stale one, or its process gone), 3 degraded (running, but something needs a look).
public enum StatusHealth: Sendable, Hashable {
    case healthy
    case notRunning(reason: String)
    case degraded(problems: [String])

    public var exitCode: Int32 {
        switch self {
        case .healthy: 0
        case .notRunning: 1
        case .degraded: 3
        }
    }

    public var name: String {
        switch self {
        case .healthy: "healthy"
        case .notRunning: "not-running"
        case .degraded: "degraded"
        }
    }

    public var problems: [String] {
        switch self {
        case .healthy: []
        case let .notRunning(reason): [reason]
        case let .degraded(problems): problems
        }
    }

    /// The limits beyond which a running tracker counts as degraded.
    public struct Limits: Sendable, Hashable {
        /// A report older than this means the daemon stopped writing it (it writes every 10 s).
        public var staleAfter: TimeInterval = 30
        /// More queued positions than this.
        public var maxQueueDepth = 10_000
        /// The oldest queued position waiting longer than this (by its fix time).
        public var maxQueueAge: TimeInterval = 86_400
        /// No accepted fix for this long, once the daemon has run this long.
        public var maxFixAge: TimeInterval = 3600

        public init() {}
    }

    /// Judges a report at `now`; `processAlive` tells whether the report's pid still runs Tern.
    public static func judge(
        report: StatusReport?, queue: QueueStats?, now: Date, limits: Limits = Limits(), processAlive: (Int32) -> Bool
    ) -> StatusHealth {
        guard let report else { return .notRunning(reason: "no status report: tern run has not started with this status_file") }
        let age = now.timeIntervalSince(report.updated)
        guard processAlive(report.pid) else {
            return .notRunning(reason: "the daemon that wrote the report (pid \(report.pid)) is gone: systemctl status tern; journalctl -u tern")
        }
        guard age <= limits.staleAfter else {
            return .notRunning(reason: "the daemon's report is \(Int(age)) s old (it writes every 10 s): is it hung? journalctl -u tern")
        }
        var problems: [String] = []
        if let blocked = report.uplink.blockedReason { problems.append("uplink blocked: \(blocked)") }
        problems += report.problems ?? []
        if ![ReceiverLinkState.connected.description, ReceiverLinkState.connecting.description].contains(report.receiverLink) {
            problems.append(report.receiverLink)
        }
        if let depth = queue?.depth ?? report.queueDepth, depth > limits.maxQueueDepth {
            problems.append("\(depth) positions queued (more than \(limits.maxQueueDepth)): uploads are not keeping up")
        }
        if let oldest = queue?.oldestTime, now.timeIntervalSince(oldest) > limits.maxQueueAge {
            problems.append("the oldest queued position is \(Int(now.timeIntervalSince(oldest) / 3600)) h old")
        }
        let lastFix = report.gateway.lastAccepted?.time ?? report.started
        if report.gateway.uptimeSeconds > limits.maxFixAge, now.timeIntervalSince(lastFix) > limits.maxFixAge {
            problems.append("no fix accepted for \(Int(now.timeIntervalSince(lastFix) / 60)) min: no sky, or a receiver problem")
        }
        if report.gateway.droppedUnwritten > 0 {
            problems.append("\(report.gateway.droppedUnwritten) positions lost because the store failed for long")
        }
        return problems.isEmpty ? .healthy : .degraded(problems: problems)
    }

    /// Whether `pid` is a running Tern process (a pid reused by another program does not count).
    public static func isTernProcess(_ pid: Int32) -> Bool {
        guard pid > 0, let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return false }
        return command.split(separator: "\0").first.map { ($0 as Substring).hasSuffix("tern") } ?? false
    }
}

/// `tern status --json`: a documented, versioned document (docs/diagnostics.md).
public struct StatusDocument: Sendable, Codable {
    /// Bumped when a field changes meaning or goes away (new fields do not bump it).
    public static let currentSchema = 1

    public var schema = StatusDocument.currentSchema
    public var health: String
    public var problems: [String]
    public var stale: Bool
    public var generatedAt: Date
    public var reportAgeSeconds: Double?
    public var queue: Queue?
    public var lastFixAgeSeconds: Double?
    public var lastUploadAt: Date?
    public var lastUploadError: String?
    public var receiverLink: String?
    public var daemon: StatusReport?

    public struct Queue: Sendable, Codable {
        public var depth: Int
        public var oldestAgeSeconds: Double?
        public var lastSequence: Int64?
        public var dropped: QueueDrops
        public var quarantined: Int
    }

    public init(health: StatusHealth, report: StatusReport?, queue stats: QueueStats?, now: Date) {
        self.health = health.name
        problems = health.problems
        if case .notRunning = health { stale = true } else { stale = false }
        generatedAt = now
        reportAgeSeconds = report.map { now.timeIntervalSince($0.updated) }
        queue = stats.map {
            Queue(
                depth: $0.depth, oldestAgeSeconds: $0.oldestTime.map { now.timeIntervalSince($0) }, lastSequence: $0.lastSequence,
                dropped: $0.dropped, quarantined: $0.quarantined)
        }
        lastFixAgeSeconds = report?.gateway.lastAccepted.map { now.timeIntervalSince($0.time) }
        lastUploadAt = report?.uplink.lastSuccessAt
        lastUploadError = report?.uplink.lastError
        receiverLink = report?.receiverLink
        daemon = report
    }

    public func json() throws -> Data {
        try JSONOutput.encoder(snakeCaseKeys: true, dates: .iso8601).encode(self)
    }
}
