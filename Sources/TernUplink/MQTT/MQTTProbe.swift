import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// What `tern doctor` checks of an MQTT broker without touching the tracker's session (a CONNECT
/// with the device's client id would end the running daemon's connection): a TCP connection and, for
/// `mqtts://`, a real TLS handshake with the trust the uplink uses (`uplink.ca_file`, else the
/// system's CAs), the certificate checked against the host. Failures are said as the uplink says them
/// (`MQTTTransportError`).
public enum MQTTProbe {
    /// nil when the broker takes the connection (and its certificate verifies), else why not.
    public static func check(
        url: URL, caFile: String?, timeout: Duration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async -> String? {
        let endpoint: MQTTEndpoint
        let tls: NIOSSLContext?
        do {
            endpoint = try MQTTEndpoint(url: url)
            tls = try MQTTSettings.tlsContext(endpoint: endpoint, caFile: caFile)
        } catch {
            return "\(error)"
        }
        let eventLoop = group.next()
        let settled = eventLoop.makePromise(of: Void.self)
        let deadline = eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            settled.fail(MQTTFailure.retryable("\(endpoint) did not complete the TLS handshake within \(timeout)"))
        }
        do {
            let channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(.nanoseconds(timeout.nanoseconds))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: endpoint.serverHostname))
                        }
                        try channel.pipeline.syncOperations.addHandler(HandshakeWatch(settled: settled, waitsForTLS: tls != nil))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port).get()
            defer { channel.close(promise: nil) }
            try await settled.futureResult.get()
            deadline.cancel()
            return nil
        } catch let failure as MQTTFailure {
            deadline.cancel()
            return failure.reason
        } catch {
            deadline.cancel()
            settled.succeed()
            return MQTTTransportError.classify(error, endpoint: endpoint, duringTLSHandshake: tls != nil).reason
        }
    }
}

/// Settles the probe: at once without TLS, at the handshake's end with it; an error or a hang-up
/// before then fails it.
private final class HandshakeWatch: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let settled: EventLoopPromise<Void>
    private let waitsForTLS: Bool

    init(settled: EventLoopPromise<Void>, waitsForTLS: Bool) {
        self.settled = settled
        self.waitsForTLS = waitsForTLS
    }

    func channelActive(context: ChannelHandlerContext) {
        if !waitsForTLS { settled.succeed() }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent { settled.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settled.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settled.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}
