import NIOCore
import NIOTLS

/// Splits the bytes from the broker into packets.
struct MQTTPacketDecoder: ByteToMessageDecoder {
    typealias InboundOut = MQTTPacket

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let packet = try MQTTPacket.decode(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(packet))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// The end of one connection's pipeline: tells the core when the connection is ready (after the TLS
/// handshake with mqtts), what arrived, and why it ended. Events carry the connection's generation,
/// so those of a connection the core has given up are ignored.
final class MQTTChannelHandler: ChannelInboundHandler {
    typealias InboundIn = MQTTPacket

    private let core: NIOLoopBound<MQTTUplinkCore>
    private let generation: Int
    private let waitsForTLS: Bool
    private let endpoint: MQTTEndpoint
    /// The first error seen: the reason the connection ends.
    private var failure: MQTTFailure?
    /// The connection is ready for MQTT (TCP up, and the TLS handshake done with mqtts).
    private var isOpen = false

    init(core: NIOLoopBound<MQTTUplinkCore>, generation: Int, waitsForTLS: Bool, endpoint: MQTTEndpoint) {
        self.core = core
        self.generation = generation
        self.waitsForTLS = waitsForTLS
        self.endpoint = endpoint
    }

    func channelActive(context: ChannelHandlerContext) {
        if !waitsForTLS { open() }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if waitsForTLS, case .handshakeCompleted? = event as? TLSUserEvent { open() }
        context.fireUserInboundEventTriggered(event)
    }

    private func open() {
        isOpen = true
        core.value.opened(generation: generation)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        core.value.received(unwrapInboundIn(data), generation: generation)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let codecError = error as? MQTTCodecError {
            core.value.malformed(codecError.description, generation: generation)
        } else if failure == nil {
            failure = MQTTTransportError.classify(error, endpoint: endpoint, duringTLSHandshake: waitsForTLS && !isOpen)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let closed = waitsForTLS && !isOpen
            ? MQTTTransportError.endedDuringTLSHandshake("it closed the connection", endpoint: endpoint)
            : .retryable("\(endpoint) closed the connection")
        core.value.lost(failure ?? closed, generation: generation)
        context.fireChannelInactive()
    }
}
