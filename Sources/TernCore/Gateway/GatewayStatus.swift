
/// What the gateway has done so far: for the status line, `tern status` and the demo summary.
public struct GatewayStatus: Sendable, Hashable, Codable {
    public var receiverPowered = false
    /// Total time the receiver was powered, seconds (by the gateway's clock).
    public var receiverOnSeconds = 0.0
    /// How many times the receiver was switched on.
    public var powerCycles = 0
    /// Power-ons the scheduler gave up on without a fix (no sky).
    public var acquisitionTimeouts = 0
    /// Every fix the receiver reported.
    public var fixesSeen = 0
    /// Receiver epochs without a fix (acquiring), which only say how many satellites are heard.
    public var noFixEpochs = 0
    /// Fixes that arrived while the scheduler had the receiver off (a receiver without a supply
    /// switch keeps talking).
    public var fixesUnwanted = 0
    /// Fixes measured before the receiver's last power-on (left over from the previous power cycle),
    /// kept from the scheduler (`FixFreshness`).
    public var staleFixes = 0
    /// Fixes the scheduler delivered and the filter's rules passed (stored, or thinned).
    public var fixesAccepted = 0
    /// Rejections by reason (the reason's kind, e.g. "poorAccuracy").
    public var rejections: [String: Int] = [:]
    /// Fixes that passed but thinning dropped (not stored), by reason (e.g. "withinBudget").
    public var thinned: [String: Int] = [:]
    /// Times the filter re-anchored on mutually consistent fixes far from its reference.
    public var reanchors = 0
    /// Positions durably written to the queue.
    public var enqueued = 0
    /// Positions accepted but not yet written: waiting for the group commit, or for the store to recover
    /// (retried with backoff).
    public var pendingWrites = 0
    /// Accepted positions given up because the store failed for long (more than `maxPendingWrites` waited).
    public var droppedUnwritten = 0
    /// Positions the queue's capacity rules dropped or refused (`QueueCapacity`), since start.
    public var queueDrops = QueueDrops()
    /// The scheduler's next wake-up, since the gateway started; nil when none is pending.
    public var nextWake: Duration?
    /// Wake-ups the scheduler asked for and got.
    public var wakeUps = 0
    /// Seconds since the gateway started (by the gateway's clock).
    public var uptimeSeconds = 0.0
    /// The last fix the filter accepted.
    public var lastAccepted: Fix?
    /// What the scheduler is doing and why (nil before the gateway runs).
    public var scheduler: FixScheduler.Summary?
    public var lastError: String?

    public init() {}

    /// All but `nextWake` (a time on the gateway's own clock; the scheduler summary says when).
    private enum CodingKeys: String, CodingKey {
        case receiverPowered, receiverOnSeconds, powerCycles, acquisitionTimeouts, fixesSeen, noFixEpochs
        case fixesUnwanted, staleFixes, fixesAccepted, rejections, thinned, reanchors, enqueued, pendingWrites, droppedUnwritten, queueDrops
        case wakeUps, uptimeSeconds
        case lastAccepted, scheduler, lastError
    }
}
