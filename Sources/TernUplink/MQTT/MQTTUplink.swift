import Foundation
import Logging
import NIOCore
import TernCore

/// Publishes positions as OwnTracks `location` messages to an MQTT 3.1.1 broker (mosquitto, EMQX,
/// HiveMQ, …), QoS 1, not retained, on `uplink.topic` (default `owntracks/USER/DEVICE`, which the
/// OwnTracks Recorder and Home Assistant subscribe to).
///
/// One connection, kept open between batches (PINGREQ after a quiet keepalive), opened again by the
/// next batch when it dropped. Client id `tern-DEVICE`, clean session off, so the broker keeps our
/// session; a last will `{"_type":"lwt","tst":…}` on the topic tells OwnTracks clients when the
/// connection died. A batch is published with at most `window` messages unacknowledged and is
/// `.delivered` only when every position has its PUBACK. When the connection fails mid-batch the answer
/// is `.partial(through:rest: .retryable)` for the acknowledged prefix; the unacknowledged messages are
/// sent again with DUP and their packet ids on the next connection (the broker may deliver them
/// twice: consumers dedup by `tern_id`). Credentials or certificates the broker refuses are
/// `.permanent`, naming the keys to fix.
///
/// What a PUBACK promises: the broker has taken the message and will pass it to the subscribers
/// connected now (and queue it for absent subscribers with persistent sessions) unless it stops first.
/// It does not promise that any subscriber got it, nor that it is on disk. mosquitto, for one, keeps
/// messages in memory; with `persistence true` (Debian's packaged config; mosquitto's own default is
/// off) it writes them to its database only every `autosave_interval` (30 min by default) and at a
/// clean shutdown. A broker killed or losing power after a PUBACK can lose what it had not passed on
/// yet, and Tern has already deleted it. Where that matters, subscribe with something that stores what
/// it receives (the OwnTracks Recorder does) so messages leave the broker at once, and give mosquitto
/// a short `autosave_interval` (or `autosave_on_changes true`) for what waits for absent subscribers.
public final class MQTTUplink: Uplink, Sendable {
    /// Protocol knobs with working defaults (tests shorten them).
    public struct Tuning: Sendable, Hashable {
        /// PINGREQ after this long without a packet from us (the broker drops us after 1.5 times it).
        public var keepAlive: Duration
        /// Unacknowledged PUBLISHes at most.
        public var window: Int
        /// TCP + TLS + CONNACK; nil: the uplink's timeout.
        public var connectTimeout: Duration?
        /// An unanswered PUBLISH or PINGREQ ends the connection after this long; nil: the uplink's timeout.
        public var responseTimeout: Duration?

        public init(keepAlive: Duration = .seconds(60), window: Int = 16, connectTimeout: Duration? = nil, responseTimeout: Duration? = nil) {
            self.keepAlive = keepAlive
            self.window = window
            self.connectTimeout = connectTimeout
            self.responseTimeout = responseTimeout
        }
    }

    /// Where the broker is.
    public let endpoint: MQTTEndpoint
    /// The topic positions are published to.
    public let topic: String
    private let trackerID: OwnTracksTrackerID
    private let eventLoop: any EventLoop
    private let core: NIOLoopBoundBox<MQTTUplinkCore>
    private let now: @Sendable () -> Date

    /// `url`: `uplink.url` (`mqtt://HOST[:1883]`, `mqtts://HOST[:8883]`); `topic`, `username`,
    /// `password`, `caFile`, `trackerID`: `uplink.topic`, `uplink.username`, `uplink.password`,
    /// `uplink.ca_file` (PEM; without it the system's CAs are trusted), `uplink.tracker_id`;
    /// `timeout`: `uplink.timeout`, for connecting and for each answer. Throws on settings that cannot work.
    public init(
        url: URL, device: String, topic: String?, username: String?, password: String?, caFile: String?,
        trackerID: String?, timeout: Duration, group: any EventLoopGroup, logger: Logger, tuning: Tuning = Tuning(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(UplinkConfigError) {
        let endpoint = try MQTTEndpoint(url: url)
        let (user, password) = try MQTTSettings.credentials(username: username, password: password)
        let topic = try MQTTSettings.topic(configured: topic, username: user, device: device)
        let tlsContext = try MQTTSettings.tlsContext(endpoint: endpoint, caFile: caFile)
        let keepAliveSeconds = UInt16(clamping: tuning.keepAlive.components.seconds)
        let will = MQTTWill(
            topic: topic, payload: Array(#"{"_type":"lwt","tst":\#(OwnTracksLocation.unixSeconds(now()))}"#.utf8),
            qos: .atLeastOnce, retain: false)
        let connect = MQTTConnect(
            clientID: "tern-\(device)", cleanSession: false, keepAliveSeconds: keepAliveSeconds, will: will,
            username: user, password: password)
        let machine = MQTTConnectionStateMachine(configuration: .init(
            connect: connect, broker: endpoint.description, window: tuning.window,
            connectTimeout: tuning.connectTimeout ?? timeout, responseTimeout: tuning.responseTimeout ?? timeout))
        let eventLoop = group.next()
        self.endpoint = endpoint
        self.topic = topic
        self.trackerID = try OwnTracksTrackerID(configured: trackerID, device: device)
        self.eventLoop = eventLoop
        self.now = now
        core = NIOLoopBoundBox.makeBoxSendingValue(
            MQTTUplinkCore(machine: machine, eventLoop: eventLoop, endpoint: endpoint, tlsContext: tlsContext, logger: logger),
            eventLoop: eventLoop)
    }

    /// Publishes the batch; returns when every position is acknowledged or the connection failed.
    public func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        guard !batch.isEmpty else { return .delivered }
        let (messages, progress) = prepare(batch)
        let promise = eventLoop.makePromise(of: UplinkResult.self)
        let core = core
        eventLoop.execute { core.value.start(messages, progress: progress, promise: promise) }
        return await withTaskCancellationHandler {
            (try? await promise.futureResult.get()) ?? .retryable(reason: "the MQTT upload ended without an outcome")
        } onCancel: { [eventLoop] in
            eventLoop.execute { core.value.cancelBatch() }
        }
    }

    /// Says DISCONNECT (the broker then drops the last will) and closes the connection; later batches fail.
    public func shutdown() async {
        let core = core
        try? await eventLoop.flatSubmit { core.value.shutdown() }.get()
    }

    /// Connections opened and messages retransmitted with DUP, so far.
    public func statistics() async -> (connections: Int, retransmissions: Int) {
        let core = core
        return (try? await eventLoop.submit { (core.value.connectionAttempts, core.value.retransmissions) }.get()) ?? (0, 0)
    }

    /// The messages for the batch, up to the first position that cannot be written (rejected).
    private func prepare(_ batch: [QueuedPosition]) -> ([MQTTOutgoing], MQTTBatchProgress) {
        var messages: [MQTTOutgoing] = []
        let createdAt = now()
        for queued in batch {
            do {
                let payload = try OwnTracksLocation(queued, trackerID: trackerID, createdAt: createdAt).encoded()
                messages.append(MQTTOutgoing(sequence: queued.sequence, topic: topic, payload: payload))
            } catch {
                let rejected = MQTTBatchProgress.Rejected(sequence: queued.sequence, reason: error.description)
                return (messages, MQTTBatchProgress(sequences: messages.map(\.sequence), rejected: rejected))
            }
        }
        return (messages, MQTTBatchProgress(sequences: messages.map(\.sequence)))
    }
}
