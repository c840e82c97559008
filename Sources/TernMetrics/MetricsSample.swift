import Foundation
import TernCore
import TernGateway

/// One reading of a running daemon's counters, the input of `StatusMetrics`. Counters are cumulative
/// since the daemon started; the sample says what is, the metrics turn it into Prometheus series.
public struct MetricsSample: Sendable {
    public var now: Date
    /// When the daemon started.
    public var started: Date
    public var gateway: GatewayStatus
    public var uplink: ForwarderStatus
    /// Positions waiting in the queue and the fix time of the oldest (nil: could not be read).
    public var queueDepth: Int?
    public var queueOldest: Date?
    /// The receiver link's state (`ReceiverLinkState.name`).
    public var receiverLink: String
    public var nmea: NMEA
    /// Conditions the daemon retries around (e.g. `metrics.listen` cannot bind): `tern status` names them.
    public var serviceProblems: Int

    /// What the serial link carried since start.
    public struct NMEA: Sendable, Hashable {
        public var bytes: Int
        public var sentences: Int
        public var checksumErrors: Int

        public init(bytes: Int = 0, sentences: Int = 0, checksumErrors: Int = 0) {
            self.bytes = bytes
            self.sentences = sentences
            self.checksumErrors = checksumErrors
        }
    }

    public init(
        serviceProblems: Int = 0, now: Date, started: Date, gateway: GatewayStatus = GatewayStatus(), uplink: ForwarderStatus = ForwarderStatus(),
        queueDepth: Int? = nil, queueOldest: Date? = nil, receiverLink: String = "connected",
        nmea: NMEA = NMEA()
    ) {
        self.now = now
        self.started = started
        self.gateway = gateway
        self.uplink = uplink
        self.queueDepth = queueDepth
        self.queueOldest = queueOldest
        self.receiverLink = receiverLink
        self.nmea = nmea
        self.serviceProblems = serviceProblems
    }
}
