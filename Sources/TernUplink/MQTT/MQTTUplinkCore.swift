import Logging
import NIOCore
import NIOPosix
import NIOSSL
import TernCore

/// The shell around `MQTTConnectionStateMachine`: performs its actions with NIO on one event loop and
/// feeds back what happened as events. Every member is used on `eventLoop` only (`MQTTUplink` reaches
/// it through a `NIOLoopBoundBox`); events raised while actions are performed wait their turn.
final class MQTTUplinkCore {
    /// A batch waiting for its acknowledgements.
    private struct Waiting {
        var progress: MQTTBatchProgress
        var promise: EventLoopPromise<UplinkResult>
    }

    private var machine: MQTTConnectionStateMachine
    private let eventLoop: any EventLoop
    private let endpoint: MQTTEndpoint
    private let tlsContext: NIOSSLContext?
    private let logger: Logger
    private let origin = NIODeadline.now()
    private var channel: (any Channel)?
    /// Counts connections; events of older ones are ignored.
    private var generation = 0
    private var wake: (at: Duration, task: Scheduled<Void>)?
    private var waiting: Waiting?
    private var queuedEvents: [MQTTConnectionStateMachine.Event] = []
    private var isHandling = false

    init(
        machine: MQTTConnectionStateMachine, eventLoop: any EventLoop, endpoint: MQTTEndpoint, tlsContext: NIOSSLContext?,
        logger: Logger
    ) {
        self.machine = machine
        self.eventLoop = eventLoop
        self.endpoint = endpoint
        self.tlsContext = tlsContext
        self.logger = logger
    }

    var retransmissions: Int { machine.retransmissions }
    var connectionAttempts: Int { machine.connectionAttempts }

    // MARK: - Requests from MQTTUplink

    func start(_ messages: [MQTTOutgoing], progress: MQTTBatchProgress, promise: EventLoopPromise<UplinkResult>) {
        guard waiting == nil else {
            promise.succeed(.retryable(reason: "another MQTT upload is in progress: uploads are one at a time"))
            return
        }
        guard !messages.isEmpty else {
            promise.succeed(progress.result(ending: nil))
            return
        }
        waiting = Waiting(progress: progress, promise: promise)
        handle(.publish(messages, now: now()))
    }

    /// The caller stopped waiting: the batch ends with what is acknowledged so far; the connection stays.
    func cancelBatch() {
        finish(.retryable("upload cancelled"))
    }

    func shutdown() -> EventLoopFuture<Void> {
        let closed = channel?.closeFuture ?? eventLoop.makeSucceededVoidFuture()
        handle(.shutdown)
        wake?.task.cancel()
        wake = nil
        return closed
    }

    // MARK: - Events from MQTTChannelHandler

    func opened(generation: Int) {
        if generation == self.generation { handle(.transportOpened(now: now())) }
    }

    func received(_ packet: MQTTPacket, generation: Int) {
        if generation == self.generation { handle(.received(packet, now: now())) }
    }

    func malformed(_ reason: String, generation: Int) {
        if generation == self.generation { handle(.malformed(reason: reason)) }
    }

    func lost(_ failure: MQTTFailure, generation: Int) {
        guard generation == self.generation else { return }
        channel = nil
        handle(.transportLost(failure))
    }

    // MARK: - The loop

    private func handle(_ event: MQTTConnectionStateMachine.Event) {
        queuedEvents.append(event)
        guard !isHandling else { return }
        isHandling = true
        defer { isHandling = false }
        while !queuedEvents.isEmpty {
            perform(machine.handle(queuedEvents.removeFirst()))
        }
    }

    private func perform(_ actions: [MQTTConnectionStateMachine.Action]) {
        for action in actions {
            switch action {
            case .openTransport:
                open()
            case let .send(packet):
                write(packet)
            case .closeTransport:
                closeChannel()
            case let .wake(at):
                schedule(at)
            case let .delivered(sequence):
                waiting?.progress.acknowledge(sequence)
                if let waiting, waiting.progress.isComplete { finish(nil) }
            case let .failed(failure):
                logger.info("mqtt connection failed", metadata: ["broker": "\(endpoint)", "reason": "\(failure)"])
                finish(failure)
            }
        }
        channel?.flush()
    }

    /// Flushes and closes the connection; whatever it reports afterwards is ignored.
    private func closeChannel() {
        generation += 1
        channel?.flush()
        channel?.close(promise: nil)
        channel = nil
    }

    private func finish(_ failure: MQTTFailure?) {
        guard let waiting else { return }
        self.waiting = nil
        waiting.promise.succeed(waiting.progress.result(ending: failure))
    }

    private func write(_ packet: MQTTPacket) {
        guard let channel else { return }
        var buffer = channel.allocator.buffer(capacity: 256)
        do {
            try packet.encode(into: &buffer)
        } catch {
            closeChannel()
            handle(.transportLost(.permanent("cannot write \(packet.name) (\(error)): check uplink.topic, uplink.username and uplink.password")))
            return
        }
        channel.write(buffer, promise: nil)
    }

    private func open() {
        generation += 1
        let generation = generation
        let core = NIOLoopBound(self, eventLoop: eventLoop)
        let (endpoint, tlsContext) = (endpoint, tlsContext)
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(machine.configuration.connectTimeout.nanoseconds))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tlsContext {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: endpoint.serverHostname))
                    }
                    try pipeline.addHandler(ByteToMessageHandler(MQTTPacketDecoder()))
                    try pipeline.addHandler(MQTTChannelHandler(
                        core: core, generation: generation, waitsForTLS: tlsContext != nil, endpoint: endpoint))
                    core.value.attach(channel, generation: generation)
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .whenFailure { error in
                core.value.lost(MQTTTransportError.classify(error, endpoint: endpoint), generation: generation)
            }
    }

    private func attach(_ channel: any Channel, generation: Int) {
        if generation == self.generation { self.channel = channel } else { channel.close(promise: nil) }
    }

    /// One timer, for the earliest deadline asked for; a tick at a later one comes from the machine again.
    private func schedule(_ deadline: Duration) {
        if let wake, wake.at <= deadline { return }
        wake?.task.cancel()
        let delay = TimeAmount.nanoseconds(max(0, (deadline - now()).nanoseconds))
        let task = eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            wake = nil
            handle(.tick(now: now()))
        }
        wake = (deadline, task)
    }

    private func now() -> Duration {
        .nanoseconds(Int64(NIODeadline.now().uptimeNanoseconds - origin.uptimeNanoseconds))
    }
}
