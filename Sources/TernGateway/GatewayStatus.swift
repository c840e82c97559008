/// What the gateway has done so far: for the status line, `tern status` and the demo summary.
public struct GatewayStatus: Sendable, Hashable, Codable {
    public var receiverPowered = false
    /// Total time the receiver was powered, seconds (by the gateway's clock).
    public var receiverOnSeconds = 0.0
    public var powerCycles = 0
    public var acquisitionTimeouts = 0
    /// Every fix the receiver reported.
    public var fixesSeen = 0
    /// Fixes that arrived while the scheduler wanted none (e.g. just before power-off).
    public var fixesUnwanted = 0
    public var fixesAccepted = 0
    /// Rejections by reason (the reason's kind, e.g. "poorAccuracy").
    public var rejections: [String: Int] = [:]
    /// Positions durably written to the queue.
    public var enqueued = 0
    /// Positions accepted but not yet written because the store failed (retried on the next fix).
    public var pendingWrites = 0
    public var lastError: String?

    public init() {}
}
