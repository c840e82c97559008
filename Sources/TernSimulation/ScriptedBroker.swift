import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// An MQTT 3.1.1 broker on loopback that misbehaves on cue, for what a real broker will not do
/// (`HostileBrokerTests`, `tern-bench hostile`): answer CONNECT and then nothing, acknowledge a PUBLISH under another packet
/// id, hang up right after CONNACK. `honest` acknowledges every QoS 1 PUBLISH, as mosquitto does.
/// It reads the packets for real (fixed header, remaining length, topic, packet id); a PUBLISH it
/// acknowledged counts as stored, by its payload's `tern_id`.
public final class ScriptedBroker: Sendable {
    public enum Behaviour: String, Sendable, CaseIterable { case honest, silentAfterConnAck, pubAckForAnotherPacket, disconnectAfterConnAck }

    private struct State {
        var behaviour: Behaviour
        var server: (any Channel)?
        var connections = 0
        var publishes = 0
        var stored: [String] = []
    }

    private let state: Mutex<State>

    public init(_ behaviour: Behaviour) { state = Mutex(State(behaviour: behaviour)) }

    public var behaviour: Behaviour {
        get { state.withLock { $0.behaviour } }
        set { state.withLock { $0.behaviour = newValue } }
    }

    /// CONNECTs answered, PUBLISHes read, and the `tern_id`s of the PUBLISHes acknowledged (repeats included).
    public var connections: Int { state.withLock { $0.connections } }
    public var publishes: Int { state.withLock { $0.publishes } }
    public var stored: [String] { state.withLock { $0.stored } }

    public var url: URL {
        let port = state.withLock { $0.server?.localAddress?.port ?? 0 }
        return URL(string: "mqtt://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    public func start() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptedBrokerHandler(broker: self))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        state.withLock { $0.server = server }
    }

    public func stop() async {
        let server = state.withLock { $0.server }
        try? await server?.close()
    }

    /// What to answer a packet of `type` (the fixed header's high nibble) with `body`; nil: close.
    func answer(type: UInt8, flags: UInt8, body: [UInt8]) -> [UInt8]? {
        state.withLock { state in
            switch type {
            case 1:  // CONNECT
                state.connections += 1
                return state.behaviour == .disconnectAfterConnAck ? [0x20, 0x02, 0x00, 0x00, 0xFF] : [0x20, 0x02, 0x00, 0x00]
            case 3:  // PUBLISH
                state.publishes += 1
                guard body.count >= 2 else { return nil }
                let topicLength = Int(body[0]) << 8 | Int(body[1])
                let qos = (flags >> 1) & 0x03
                guard qos == 1, body.count >= 2 + topicLength + 2 else { return [] }
                let id = (body[2 + topicLength], body[3 + topicLength])
                let payload = Data(body[(4 + topicLength)...])
                switch state.behaviour {
                case .honest:
                    state.stored.append(Self.ternID(payload))
                    return [0x40, 0x02, id.0, id.1]
                case .pubAckForAnotherPacket:
                    return [0x40, 0x02, id.0 ^ 0x80, id.1]
                case .silentAfterConnAck, .disconnectAfterConnAck:
                    return []
                }
            case 12:  // PINGREQ
                return state.behaviour == .silentAfterConnAck ? [] : [0xD0, 0x00]
            case 14:  // DISCONNECT
                return nil
            default:
                return []
            }
        }
    }

    private static func ternID(_ payload: Data) -> String {
        let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        return object?["tern_id"] as? String ?? String(decoding: payload, as: UTF8.self)
    }
}

/// Frames MQTT packets off the stream and writes the broker's answers. 0xFF after a CONNACK is the
/// cue to hang up once it is written.
private final class ScriptedBrokerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let broker: ScriptedBroker
    private var pending: [UInt8] = []

    init(broker: ScriptedBroker) { self.broker = broker }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let (type, flags, body, used) = nextPacket() {
            pending.removeFirst(used)
            guard var reply = broker.answer(type: type, flags: flags, body: body) else {
                context.close(promise: nil)
                return
            }
            let hangUp = reply.last == 0xFF && type == 1
            if hangUp { reply.removeLast() }
            if !reply.isEmpty {
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: reply)), promise: nil)
            }
            if hangUp {
                context.close(promise: nil)
                return
            }
        }
    }

    /// The first whole packet in `pending`: type, flags, body and the bytes it took.
    private func nextPacket() -> (UInt8, UInt8, [UInt8], Int)? {
        guard pending.count >= 2 else { return nil }
        var length = 0
        var multiplier = 1
        var index = 1
        while true {
            guard index < pending.count, index <= 4 else { return nil }
            let byte = pending[index]
            length += Int(byte & 0x7F) * multiplier
            multiplier *= 128
            index += 1
            if byte & 0x80 == 0 { break }
        }
        guard pending.count >= index + length else { return nil }
        return (pending[0] >> 4, pending[0] & 0x0F, Array(pending[index..<(index + length)]), index + length)
    }
}
