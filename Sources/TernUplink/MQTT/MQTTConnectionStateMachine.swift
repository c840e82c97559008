/// One MQTT 3.1.1 publishing client as a pure state machine: connects when there is something to
/// publish, keeps at most `window` QoS 1 PUBLISHes unacknowledged, retransmits the unacknowledged ones
/// with DUP and their packet ids after a reconnect (clean session off: the broker kept the session),
/// sends PINGREQ when the connection has been quiet for the keepalive, and gives up on a connection
/// that answers neither PUBLISH nor PINGREQ within `responseTimeout`. It never reconnects by itself:
/// a failure ends the batch (the forwarder backs off) and the next `publish` connects again.
///
/// Events carry `now`, a monotonic time from the shell's clock; `.wake(at:)` asks for a `.tick` then
/// (a later `.wake` does not cancel an earlier one; ticks before a deadline do nothing). No I/O.
public struct MQTTConnectionStateMachine: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Sent on every connection (its `cleanSession` should be false for retransmissions to mean anything).
        public var connect: MQTTConnect
        /// The broker as the reasons name it, e.g. `broker 10.0.0.2:1883`.
        public var broker: String
        /// Unacknowledged PUBLISHes at most.
        public var window: Int
        /// From opening the connection (TCP, TLS) to CONNACK.
        public var connectTimeout: Duration
        /// How long an unanswered PUBLISH or PINGREQ is waited for before the connection is presumed dead.
        public var responseTimeout: Duration

        public init(connect: MQTTConnect, broker: String, window: Int, connectTimeout: Duration, responseTimeout: Duration) {
            self.connect = connect
            self.broker = broker
            self.window = max(1, window)
            self.connectTimeout = connectTimeout
            self.responseTimeout = responseTimeout
        }

        var keepAlive: Duration? { connect.keepAliveSeconds == 0 ? nil : .seconds(Int(connect.keepAliveSeconds)) }
    }

    public enum State: Sendable, Hashable {
        /// No connection, none being made.
        case disconnected
        /// The transport (TCP, then TLS) is being opened; given up at `deadline`.
        case connecting(deadline: Duration)
        /// CONNECT sent; given up at `deadline` without CONNACK.
        case awaitingConnAck(deadline: Duration)
        case connected(Liveness)
        /// Shut down for good.
        case closed
    }

    /// The deadlines of a live connection.
    public struct Liveness: Sendable, Hashable {
        /// When a PINGREQ is due (the keepalive after our last packet); nil without keepalive.
        public var nextPing: Duration?
        /// A PINGREQ is unanswered: its PINGRESP is due by then.
        public var pingDeadline: Duration?
        /// PUBLISHes are unacknowledged: the next PUBACK is due by then.
        public var acknowledgeDeadline: Duration?

        var earliest: Duration? { [nextPing, pingDeadline, acknowledgeDeadline].compactMap { $0 }.min() }
    }

    public enum Event: Sendable, Hashable {
        /// Publish these (a batch, oldest first).
        case publish([MQTTOutgoing], now: Duration)
        /// The transport is ready for bytes (after the TLS handshake with mqtts).
        case transportOpened(now: Duration)
        case received(MQTTPacket, now: Duration)
        /// The bytes from the broker are not MQTT (the decoder's reason).
        case malformed(reason: String)
        /// The transport failed to open or closed, for this reason.
        case transportLost(MQTTFailure)
        case tick(now: Duration)
        case shutdown
    }

    public enum Action: Sendable, Hashable {
        /// Open a connection to the broker, then report `.transportOpened` or `.transportLost`.
        case openTransport
        case send(MQTTPacket)
        /// Close the connection (its loss is no longer news: it is ignored).
        case closeTransport
        /// Report `.tick` at this time.
        case wake(at: Duration)
        /// The broker acknowledged the message carrying this sequence.
        case delivered(sequence: Int64)
        /// The connection failed: what is not yet `delivered` is not, for now.
        case failed(MQTTFailure)
    }

    public let configuration: Configuration
    public private(set) var state: State = .disconnected
    private(set) var session = MQTTSession()
    /// PUBLISHes sent again with DUP after a reconnect, in all.
    public private(set) var retransmissions = 0
    /// Connections opened, in all.
    public private(set) var connectionAttempts = 0

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.closed, .publish):
            return [.failed(.retryable("the MQTT uplink is shut down"))]
        case (.closed, _):
            return []
        case (.disconnected, .shutdown):
            state = .closed
            return [.failed(.retryable("the MQTT uplink is shut down"))]
        case (.connected, .shutdown):
            state = .closed
            session.dropPending()
            return [.send(.disconnect), .closeTransport, .failed(.retryable("the MQTT uplink is shut down"))]
        case (_, .shutdown):
            state = .closed
            session.dropPending()
            return [.closeTransport, .failed(.retryable("the MQTT uplink is shut down"))]

        case let (.disconnected, .publish(messages, now)):
            let delivered = session.add(messages).map(Action.delivered)
            guard session.hasWork else { return delivered }
            let deadline = now + configuration.connectTimeout
            state = .connecting(deadline: deadline)
            connectionAttempts += 1
            return delivered + [.openTransport, .wake(at: deadline)]
        case let (.connecting, .publish(messages, _)), let (.awaitingConnAck, .publish(messages, _)):
            return session.add(messages).map(Action.delivered)
        case let (.connected(liveness), .publish(messages, now)):
            return session.add(messages).map(Action.delivered) + fillWindow(liveness, now: now)

        case let (.connecting(deadline), .transportOpened):
            state = .awaitingConnAck(deadline: deadline)
            return [.send(.connect(configuration.connect))]
        case let (.awaitingConnAck, .received(.connAck(_, returnCode), now)):
            guard returnCode == .accepted else {
                return close(.refused(returnCode, broker: configuration.broker, clientID: configuration.connect.clientID))
            }
            return resume(now: now)
        case let (.connected(liveness), .received(.pubAck(packetID), now)):
            guard let sequence = session.acknowledge(packetID: packetID) else { return [] }
            var next = liveness
            next.acknowledgeDeadline = session.inFlight.isEmpty ? nil : now + configuration.responseTimeout
            return [.delivered(sequence: sequence)] + fillWindow(next, now: now)
        case let (.connected(liveness), .received(.pingResp, _)):
            var next = liveness
            next.pingDeadline = nil
            state = .connected(next)
            return wake(next)
        case let (.awaitingConnAck, .received(packet, _)):
            return close(notMQTT("it answered CONNECT with \(packet.name)"))
        case let (.connected, .received(packet, _)):
            return close(.retryable("\(configuration.broker) sent an unexpected \(packet.name) to a publishing client; reconnecting"))
        case let (.awaitingConnAck, .malformed(reason)):
            return close(notMQTT(reason))
        case let (.connected, .malformed(reason)):
            return close(.retryable("\(configuration.broker) sent bytes that are not MQTT 3.1.1 (\(reason)); reconnecting"))

        case let (.connecting, .transportLost(failure)), let (.awaitingConnAck, .transportLost(failure)),
             let (.connected, .transportLost(failure)):
            state = .disconnected
            session.dropPending()
            return [.failed(failure)]

        case let (.connecting(deadline), .tick(now)) where now >= deadline:
            return close(.retryable(
                "could not connect to \(configuration.broker) within \(configuration.connectTimeout) (TCP or TLS): check the network and uplink.url"))
        case let (.awaitingConnAck(deadline), .tick(now)) where now >= deadline:
            return close(.retryable(
                "\(configuration.broker) did not answer CONNECT within \(configuration.connectTimeout): is it an MQTT broker? check uplink.url"))
        case let (.connecting(deadline), .tick), let (.awaitingConnAck(deadline), .tick):
            return [.wake(at: deadline)]
        case let (.connected(liveness), .tick(now)):
            return keepAlive(liveness, now: now)

        default:
            return []
        }
    }

    /// After CONNACK: retransmit what is in flight (DUP, same ids), then fill the window.
    private mutating func resume(now: Duration) -> [Action] {
        var liveness = Liveness(nextPing: configuration.keepAlive.map { now + $0 })
        let retransmitted = session.inFlight.map { entry in
            Action.send(.publish(publish(entry, dup: true)))
        }
        retransmissions += retransmitted.count
        if !retransmitted.isEmpty { liveness.acknowledgeDeadline = now + configuration.responseTimeout }
        return retransmitted + fillWindow(liveness, now: now)
    }

    /// Sends waiting messages while the window has room; records the connection's deadlines.
    private mutating func fillWindow(_ liveness: Liveness, now: Duration) -> [Action] {
        var next = liveness
        var actions: [Action] = []
        while let entry = session.sendNext(window: configuration.window) {
            actions.append(.send(.publish(publish(entry, dup: false))))
        }
        if !actions.isEmpty {
            if next.acknowledgeDeadline == nil { next.acknowledgeDeadline = now + configuration.responseTimeout }
            next.nextPing = configuration.keepAlive.map { now + $0 }
        }
        state = .connected(next)
        return actions + wake(next)
    }

    /// A PINGREQ when the keepalive is due; the connection given up when an answer is overdue.
    private mutating func keepAlive(_ liveness: Liveness, now: Duration) -> [Action] {
        if let deadline = liveness.acknowledgeDeadline, now >= deadline {
            return close(.retryable(
                "\(configuration.broker) acknowledged none of \(session.inFlight.count) messages within \(configuration.responseTimeout); reconnecting"))
        }
        if let deadline = liveness.pingDeadline, now >= deadline {
            return close(.retryable("\(configuration.broker) did not answer PINGREQ within \(configuration.responseTimeout); reconnecting"))
        }
        var next = liveness
        var actions: [Action] = []
        if let due = next.nextPing, now >= due, let keepAlive = configuration.keepAlive {
            actions.append(.send(.pingReq))
            if next.pingDeadline == nil { next.pingDeadline = now + configuration.responseTimeout }
            next.nextPing = now + keepAlive
        }
        state = .connected(next)
        return actions + wake(next)
    }

    private mutating func close(_ failure: MQTTFailure) -> [Action] {
        state = .disconnected
        session.dropPending()
        return [.closeTransport, .failed(failure)]
    }

    private func notMQTT(_ reason: String) -> MQTTFailure {
        .permanent("\(configuration.broker) does not answer like an MQTT 3.1.1 broker (\(reason)): check uplink.url (mqtt:// on 1883, mqtts:// on 8883)")
    }

    private func wake(_ liveness: Liveness) -> [Action] {
        liveness.earliest.map { [.wake(at: $0)] } ?? []
    }

    private func publish(_ entry: MQTTSession.InFlight, dup: Bool) -> MQTTPublish {
        MQTTPublish(
            topic: entry.message.topic, payload: entry.message.payload, qos: .atLeastOnce, retain: false, dup: dup,
            packetID: entry.packetID)
    }
}
