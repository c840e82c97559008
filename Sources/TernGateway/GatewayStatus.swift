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
    /// Fixes the scheduler delivered and the filter accepted.
    public var fixesAccepted = 0
    /// Rejections by reason (the reason's kind, e.g. "poorAccuracy").
    public var rejections: [String: Int] = [:]
    /// Positions durably written to the queue.
    public var enqueued = 0
    /// Positions accepted but not yet written because the store failed (retried on the next fix).
    public var pendingWrites = 0
    /// The scheduler's next wake-up, since the gateway started; nil when none is pending.
    public var nextWake: Duration?
    /// Wake-ups the scheduler asked for and got.
    public var wakeUps = 0
    public var lastError: String?

    public init() {}
}
