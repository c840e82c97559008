import Foundation

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
    /// The track through the kept fixes passes close enough to this one at its time that the stored
    /// track keeps the `tolerance` metres budget (`TrackThinning.share(of:for:)`).
    case withinBudget(tolerance: Double)
    /// Closer than the minimum distance to the last kept fix, turned less than the minimum angle, and
    /// sooner than the minimum period (the peers' rule: Traccar Client, Teltonika).
    case belowMinimums

    public var description: String {
        switch self {
        case let .withinBudget(tolerance): "the kept track passes close enough to it to keep the \(Int(tolerance.rounded())) m budget"
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
