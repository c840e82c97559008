import Foundation
import TernCore

/// What `tern demo` runs: a board profile (the simulated board's by default), simulated time, speed,
/// and when the collector goes away.
public struct DemoOptions: Sendable {
    /// Simulated time the pipeline runs before the final flush.
    public var duration: Duration
    /// Simulated seconds per real second.
    public var speed: Double
    /// Where the SQLite queue lives; a fresh temporary directory when nil.
    public var dataDirectory: String?
    /// The configuration file to run; nil: `board/simulated.toml` (`SimulatedBoardProfile`).
    public var configPath: String?
    /// The collector is offline from `offlineFrom` to `offlineUntil` (fractions of `duration`).
    public var offlineFrom: Double
    public var offlineUntil: Double
    /// The simulated receiver's seed; nil: the file's.
    public var seed: UInt64?

    public init(
        duration: Duration = .seconds(900), speed: Double = 20, dataDirectory: String? = nil, configPath: String? = nil,
        offlineFrom: Double = 0.3, offlineUntil: Double = 0.6, seed: UInt64? = nil
    ) {
        self.duration = duration
        self.speed = speed
        self.dataDirectory = dataDirectory
        self.configPath = configPath
        self.offlineFrom = offlineFrom
        self.offlineUntil = offlineUntil
        self.seed = seed
    }
}

/// The demo's live status, reported about once per real second.
public struct DemoStatus: Sendable {
    public var simulatedSeconds: Double
    public var durationSeconds: Double
    public var receiverOn: Bool
    public var fixesSeen: Int
    public var fixesAccepted: Int
    public var queueDepth: Int
    public var uploaded: Int
    public var collectorOnline: Bool

    /// One line, e.g. `[ 04:10 / 15:00 ] receiver ON  fixes 31 seen, 9 accepted  queue 2  uploaded 7  collector online`.
    public var line: String {
        func mmss(_ s: Double) -> String { String(format: "%02d:%02d", Int(s) / 60, Int(s) % 60) }
        return "[ \(mmss(simulatedSeconds)) / \(mmss(durationSeconds)) ] receiver \(receiverOn ? "ON " : "off")"
            + "  fixes \(fixesSeen) seen, \(fixesAccepted) accepted  queue \(queueDepth)  uploaded \(uploaded)"
            + "  collector \(collectorOnline ? "online" : "OFFLINE")"
    }
}

/// The demo's result; `--json` prints it.
public struct DemoSummary: Sendable, Codable, Equatable {
    public var fixesSeen: Int
    public var fixesAccepted: Int
    public var enqueued: Int
    public var uploaded: Int
    public var receivedAtCollector: Int
    public var duplicatesAtCollector: Int
    /// Accepted positions that never reached the collector.
    public var lost: Int
    /// Whether the collector saw the positions in queue order.
    public var inOrder: Bool
    public var queueDepthEnd: Int
    public var receiverOnSeconds: Double
    public var powerCycles: Int
    public var uploadFailures: Int
    public var simulatedSeconds: Double
    public var collectorOfflineSeconds: Double
    public var dataDirectory: String
    /// Freshness and truth of the stored positions (`BoardAudit`).
    public var audit = BoardAudit.Summary()
    /// The policy and rules the run had (the configuration's, as the daemon reads it).
    public var rules: RulesInForce?

    enum CodingKeys: String, CodingKey {
        case fixesSeen = "fixes_seen", fixesAccepted = "fixes_accepted", enqueued, uploaded
        case receivedAtCollector = "received_at_collector", duplicatesAtCollector = "duplicates_at_collector"
        case lost, inOrder = "in_order", queueDepthEnd = "queue_depth_end", receiverOnSeconds = "receiver_on_seconds"
        case powerCycles = "power_cycles", uploadFailures = "upload_failures", simulatedSeconds = "simulated_seconds"
        case collectorOfflineSeconds = "collector_offline_seconds", dataDirectory = "data_dir"
        case audit = "positions_checked"
        case rules
    }

    /// Every accepted position arrived exactly once, in order.
    public var deliveredExactlyOnce: Bool {
        // At least once on the wire (a lost answer makes a batch go again); the collector drops repeats
        // by id, as the server contract asks, so each position counts once: none lost, none extra.
        enqueued > 0 && uploaded >= enqueued && lost == 0 && inOrder && queueDepthEnd == 0
    }

    /// Delivered exactly once, and every stored position was measured after its power-on and is what the
    /// receiver reported at its time.
    public var isClean: Bool { deliveredExactlyOnce && audit.isClean && audit.checked == enqueued }
}
