import Foundation

// The seams: each responsibility is one small protocol, injected through initializers.

/// A byte stream from a UART (or anything that behaves like one).
public protocol SerialPort: Sendable {
    /// Waits until bytes are available and returns them (at most `maxCount`, never empty).
    /// Throws `SerialPortError.disconnected` when the device went away (hang-up, EIO, end of file).
    func read(maxCount: Int) async throws -> [UInt8]
    /// Writes all bytes, waiting while the device's buffer is full.
    func write(_ bytes: [UInt8]) async throws
    /// Closes the device; reads and writes after this throw `SerialPortError.closed`.
    func close() async
}

public enum SerialPortError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case unsupportedBaudRate(Int)
    case notATerminal(path: String)
    case disconnected(path: String)
    case closed
    case io(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason):
            "cannot open serial device \(path): \(reason)"
        case let .unsupportedBaudRate(baud):
            "unsupported baud rate \(baud): use one of 4800, 9600, 19200, 38400, 57600, 115200"
        case let .notATerminal(path):
            "\(path) is not a serial device (tcgetattr failed): check the path, e.g. /dev/serial0"
        case let .disconnected(path):
            "serial device \(path) disconnected (hang-up or I/O error): check the cable or HAT"
        case .closed:
            "serial port is closed"
        case let .io(path, reason):
            "I/O error on \(path): \(reason)"
        }
    }
}

/// Switches the receiver's supply (or its run/standby state) on and off.
public protocol PowerSwitch: Sendable {
    func setPower(on: Bool) async throws
}

/// A GPS receiver: owns its serial port and power, and yields fixes while powered.
public protocol GPSReceiver: Sendable {
    func powerOn() async throws
    func powerOff() async throws
    /// The fixes the receiver reports. Meant for one consumer; finishes when the receiver stops
    /// and throws when the device fails for good.
    func fixes() -> AsyncThrowingStream<Fix, any Error>
}

/// Why the filter rejected a fix.
public enum RejectionReason: Sendable, Hashable, CustomStringConvertible {
    case noFix
    case invalidCoordinate
    case poorAccuracy(metres: Double, limit: Double)
    case outOfSequence
    /// The same time as the last accepted fix, or the same time and position as a fix already seen
    /// (a re-sent sentence, the same epoch under another talker: GP and GN).
    case duplicate
    case implausibleJump(metresPerSecond: Double, limit: Double)
    /// The receiver's date contradicts a synchronised clock (`Fix.timeUntrusted`).
    case untrustedTime
    /// The fix's time is `seconds` away from what the clocks expect (positive: in the future): the
    /// synchronised system clock when there is one, else the last accepted fix advanced by the
    /// monotonic clock (`TimeSanityRule`).
    case implausibleTime(seconds: Double, limit: Double)
    /// One of the first fixes of a power session (`WarmUpRule`), not yet accurate by its own estimate.
    case warmingUp(seconds: Double, accuracy: Double?)

    public var description: String {
        switch self {
        case .noFix: "no fix (quality invalid or estimated)"
        case .invalidCoordinate: "coordinate out of range"
        case let .poorAccuracy(m, limit): "accuracy \(Int(m.rounded())) m worse than \(Int(limit.rounded())) m"
        case .outOfSequence: "older than the last accepted fix"
        case .duplicate: "same time as the last accepted fix, or the same time and position as a fix already seen"
        case let .implausibleJump(v, limit):
            "implies \(Int(v.rounded())) m/s, more than \(Int(limit.rounded())) m/s"
        case .untrustedTime: "receiver date far from the synchronised system clock (no GPS week-rollover correction fits)"
        case let .implausibleTime(seconds, limit):
            "fix time \(Int(seconds.rounded())) s \(seconds >= 0 ? "ahead of" : "behind") what the clocks expect (limit \(Int(limit.rounded())) s)"
        case let .warmingUp(seconds, accuracy):
            "\(Int(seconds.rounded())) s into the power session, accuracy \(accuracy.map { "\(Int($0.rounded())) m" } ?? "unknown"): still warming up"
        }
    }

    /// A stable name for counting, e.g. "poorAccuracy".
    public var kind: String {
        switch self {
        case .noFix: "noFix"
        case .invalidCoordinate: "invalidCoordinate"
        case .poorAccuracy: "poorAccuracy"
        case .outOfSequence: "outOfSequence"
        case .duplicate: "duplicate"
        case .implausibleJump: "implausibleJump"
        case .untrustedTime: "untrustedTime"
        case .implausibleTime: "implausibleTime"
        case .warmingUp: "warmingUp"
        }
    }
}

/// Why thinning dropped a fix that passed every rule (it is not stored; the scheduler still counts it
/// as the fix it asked for).
public enum ThinningReason: Sendable, Hashable, CustomStringConvertible {
    /// The track through the kept fixes passes within `tolerance` metres of this one at its time.
    case withinBudget(tolerance: Double)
    /// Closer than the minimum distance to the last kept fix, turned less than the minimum angle, and
    /// sooner than the minimum period (the peers' rule: Traccar Client, Teltonika).
    case belowMinimums

    public var description: String {
        switch self {
        case let .withinBudget(tolerance): "the kept track passes within \(Int(tolerance.rounded())) m of it"
        case .belowMinimums: "under the minimum distance, angle and period since the last kept fix"
        }
    }

    /// A stable name for counting.
    public var kind: String {
        switch self {
        case .withinBudget: "withinBudget"
        case .belowMinimums: "belowMinimums"
        }
    }
}

/// What the filter knows besides the fix: the clocks (injected, never read by the filter) and the power session.
public struct FilterContext: Sendable, Hashable {
    /// The monotonic time the fix reached the filter (the gateway's clock), nil when there is none
    /// (a log replayed without its timing).
    public var now: Duration?
    /// UTC now when the system clock is known to be synchronised, else nil.
    public var synchronisedTime: Date?
    /// How long the receiver has been producing usable fixes in its current power session (since its
    /// first usable fix after the power-on), nil when unknown.
    public var sessionAge: Duration?

    public init(now: Duration? = nil, synchronisedTime: Date? = nil, sessionAge: Duration? = nil) {
        self.now = now
        self.synchronisedTime = synchronisedTime
        self.sessionAge = sessionAge
    }
}

/// What the rules decided about one fix.
public enum FilterDecision: Sendable, Hashable {
    /// The fix passed every rule.
    case accept(Fix)
    case reject(RejectionReason)
}

/// The filter's answer for one fix: the rules' decision, and what thinning made of it.
///
/// Thinning judges a fix only when the next one shows whether it ends a stop or a turn, so a fix that
/// passed is usually *held* (neither stored nor thinned yet); the next evaluation resolves it. Every
/// fix that passes is in the end either stored (in `store` of some verdict, or `flush()`) or thinned
/// (counted in `thinned`), once.
public struct FilterVerdict: Sendable, Hashable {
    public var decision: FilterDecision
    /// Fixes to store now, oldest first (a held fix this one resolved, and/or this one).
    public var store: [Fix]
    /// Fixes thinning dropped with this evaluation (the held one, or this one), by reason.
    public var thinned: [ThinningReason]
    /// This fix re-anchored the filter: it is the `n`th mutually consistent fix in a row far from the
    /// old reference (a relocation, or a bad reference), so it became the reference.
    public var reanchoredAfter: Int?

    public init(decision: FilterDecision, store: [Fix] = [], thinned: [ThinningReason] = [], reanchoredAfter: Int? = nil) {
        self.decision = decision
        self.store = store
        self.thinned = thinned
        self.reanchoredAfter = reanchoredAfter
    }

    /// Whether the fix passed the rules: the scheduler is told it arrived (stored, held or thinned).
    public var passed: Bool { if case .accept = decision { true } else { false } }
    public var rejection: RejectionReason? { if case let .reject(reason) = decision { reason } else { nil } }
}

/// Decides which raw fixes become positions. Value type: it remembers what it accepted.
public protocol LocationFilter: Sendable {
    mutating func evaluate(_ fix: Fix, context: FilterContext) -> FilterVerdict
    /// The fixes still held back (thinning's candidate), to store at shutdown.
    mutating func flush() -> [Fix]
}

/// The durable store-and-forward queue.
public protocol PositionQueue: Sendable {
    /// Drawn once when the queue was created: with it, a sequence number names one position across
    /// every queue a device ever had (the uplinks' idempotency keys).
    var queueID: UUID { get }
    /// Durably stores a position; returns its sequence number. Returns once the write is on disk.
    @discardableResult
    func enqueue(_ position: Position) async throws -> Int64
    /// Durably stores positions in one transaction (a group commit), oldest first; returns once they
    /// are on disk, with what the queue's capacity rules dropped to make room (or refused).
    func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult
    /// The oldest positions not yet acknowledged, in sequence order.
    func oldest(limit: Int) async throws -> [QueuedPosition]
    /// Removes every position with a sequence ≤ `sequence`.
    func acknowledge(through sequence: Int64) async throws
    /// How many positions wait to be uploaded.
    func count() async throws -> Int
    /// The newest queued position (sent first by a live-first uplink), if any.
    func newest() async throws -> QueuedPosition?
    /// Removes one position the server confirmed out of order (live first).
    func remove(sequence: Int64) async throws
    /// Moves a position the server refuses for good out of the queue, keeping it (and why) apart.
    func quarantine(sequence: Int64, reason: String) async throws
}

extension PositionQueue {
    /// One write per position, for queues without transactions.
    public func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult {
        for position in positions { try await enqueue(position) }
        return EnqueueResult(stored: positions.count)
    }
}

/// What one durable write did.
public struct EnqueueResult: Sendable, Hashable {
    /// Positions stored by the write.
    public var stored: Int
    /// Positions the queue's capacity rules dropped (queued ones) or refused (new ones).
    public var dropped: QueueDrops

    public init(stored: Int, dropped: QueueDrops = QueueDrops()) {
        self.stored = stored
        self.dropped = dropped
    }
}

/// Positions a bounded queue gave up, by rule. Every one is counted; none silently.
public struct QueueDrops: Sendable, Hashable, Codable {
    /// The oldest queued positions, dropped for new ones (`drop-oldest`).
    public var oldest = 0
    /// Every other position of the oldest stretch, dropped for new ones (`thin-oldest`).
    public var thinned = 0
    /// New positions refused because the queue was full (`reject-new`).
    public var rejectedNew = 0
    /// Queued positions older than the maximum age.
    public var expired = 0

    public init(oldest: Int = 0, thinned: Int = 0, rejectedNew: Int = 0, expired: Int = 0) {
        self.oldest = oldest
        self.thinned = thinned
        self.rejectedNew = rejectedNew
        self.expired = expired
    }

    public var total: Int { oldest + thinned + rejectedNew + expired }

    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(
            oldest: lhs.oldest + rhs.oldest, thinned: lhs.thinned + rhs.thinned,
            rejectedNew: lhs.rejectedNew + rhs.rejectedNew, expired: lhs.expired + rhs.expired)
    }
}

/// Keeps what the scheduler has learnt across restarts (`FixScheduler.Memory`), with the wall-clock
/// time it was saved at (the downtime is measured by the wall clock: the process clock restarts).
public protocol SchedulerMemoryStore: Sendable {
    /// The memory last saved and when; nil when none was.
    func loadSchedulerMemory() async throws -> (memory: FixScheduler.Memory, savedAt: Date)?
    func saveSchedulerMemory(_ memory: FixScheduler.Memory, at time: Date) async throws
}

/// The outcome of one upload attempt.
public enum UplinkResult: Sendable, Hashable {
    /// The server confirmed every position of the batch.
    case delivered
    /// The server confirmed the positions of the batch up to and including sequence `through` (a
    /// prefix); the rest of the batch ended as `rest`.
    indirect case partial(through: Int64, rest: UplinkResult)
    /// Worth retrying later (network down, 5xx, 429, timeout); `after`: the server's `Retry-After`.
    case retryable(reason: String, after: Duration?)
    /// The server refuses this one record (a malformed value): retried a few times, then quarantined,
    /// never blocking the queue.
    case rejected(sequence: Int64, reason: String)
    /// The server refuses our configuration (authentication, unknown device): retrying the same request
    /// will not help; the uplink pauses until a human fixes it.
    case permanent(reason: String)

    /// Retryable, with no advice from the server on when.
    public static func retryable(reason: String) -> UplinkResult { .retryable(reason: reason, after: nil) }
}

/// Sends batches of positions to the server.
public protocol Uplink: Sendable {
    func send(_ batch: [QueuedPosition]) async -> UplinkResult
}

public enum ConnectivityEvent: Sendable, Hashable {
    /// The network may be back: worth trying an upload now.
    case mayBeOnline
    case offline
}

/// Tells when the network may be back.
public protocol Connectivity: Sendable {
    func events() -> AsyncStream<ConnectivityEvent>
}

/// What the gateway tells the forwarder: new positions are in the queue. Must return promptly.
public protocol Forwarding: Sendable {
    func positionsAvailable()
}
