import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import TernCore

/// What the daemon sees on the receiver's line, for whoever taps it through the control socket: every
/// chunk of bytes read (NMEA and binary replies alike) and every fix, as JSON lines
/// (`{"bytes":"<base64>"}`, `{"fix":{…}}`).
public final class ControlTap: Sendable {
    private let listeners = Mutex<[UUID: @Sendable (String) -> Void]>([:])

    public init() {}

    /// Adds a listener; returns the key that removes it.
    func listen(_ listener: @escaping @Sendable (String) -> Void) -> UUID {
        let key = UUID()
        listeners.withLock { $0[key] = listener }
        return key
    }

    func stop(_ key: UUID) { _ = listeners.withLock { $0.removeValue(forKey: key) } }

    var isTapped: Bool { listeners.withLock { !$0.isEmpty } }

    public func bytes(_ chunk: [UInt8]) {
        guard isTapped else { return }
        publish(ControlMessage(bytes: Data(chunk).base64EncodedString()))
    }

    public func fix(_ fix: Fix) {
        guard isTapped else { return }
        publish(ControlMessage(fix: fix))
    }

    private func publish(_ message: ControlMessage) {
        guard let line = message.line else { return }
        for listener in listeners.withLock({ Array($0.values) }) { listener(line) }
    }
}

/// One line on the control socket, either way.
public struct ControlMessage: Codable, Sendable {
    /// A request: `status`, `tap`, or `write` (then `bytes`).
    public var command: String?
    /// Base64: what to write (a request), or what was read from the receiver (a tap event).
    public var bytes: String?
    /// Answers and tap events.
    public var fix: Fix?
    public var written: Int?
    public var error: String?
    public var status: StatusReport?

    public init(
        command: String? = nil, bytes: String? = nil, fix: Fix? = nil, written: Int? = nil,
        error: String? = nil, status: StatusReport? = nil
    ) {
        self.command = command
        self.bytes = bytes
        self.fix = fix
        self.written = written
        self.error = error
        self.status = status
    }

    /// The message as one JSON line (with its newline).
    public var line: String? {
        let encoder = JSONOutput.encoder(pretty: false, dates: .iso8601)
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) + "\n" }
    }

    public static func parse(_ line: some StringProtocol) -> ControlMessage? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(ControlMessage.self, from: Data(line.utf8))
    }
}

/// The daemon's control socket (`control_socket`, by default `/run/tern/control.sock`, mode 0660 so
/// the `tern` group can use it): `status` answers the live report; `tap` streams what the receiver
/// says; `write` sends bytes to the receiver (commands) and then taps its answers. So `tern nmea tail`
/// and `tern receiver send` never open the UART the daemon holds.
///
/// Bounded against its clients: a request line longer than `maxRequest` is refused and the
/// connection closed; what a client sends after its request is discarded; a tap client that reads
/// slower than the receiver talks has lines dropped once `maxPending` bytes wait for it (it is told
/// how many, when it catches up), so a paused `tern nmea tail | less` cannot grow the daemon.
public final class ControlServer: Service, Sendable {
    /// The longest request line (a `write` of a receiver command is a few hundred bytes).
    public static let maxRequest = 64 * 1024
    /// Bytes that may wait for a slow tap client before lines are dropped.
    public static let maxPending = 256 * 1024

    public let path: String
    private let tap: ControlTap
    private let status: @Sendable () async -> StatusReport
    private let write: @Sendable ([UInt8]) async throws -> Void
    private let logger: Logger

    public init(
        path: String, tap: ControlTap, status: @escaping @Sendable () async -> StatusReport,
        write: @escaping @Sendable ([UInt8]) async throws -> Void, logger: Logger
    ) {
        self.path = path
        self.tap = tap
        self.status = status
        self.write = write
        self.logger = logger
    }

    public func run() async throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: Self.maxPending / 4, high: Self.maxPending))
                .childChannelInitializer { [self] child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(ControlHandler(server: self))
                    }
                }
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        } catch {
            logger.warning(
                "cannot open the control socket; tern nmea tail and tern receiver send will not see the daemon",
                metadata: ["path": "\(path)", "error": "\(error)"])
            try await gracefulShutdown()
            return
        }
        chmod(path, 0o660)
        logger.info("control socket listening", metadata: ["path": "\(path)"])
        try? await gracefulShutdown()
        try? await channel.close()
        unlink(path)
    }

    // MARK: - Called by ControlHandler

    func answer(_ request: ControlMessage, reply: @escaping @Sendable (String) -> Void) async -> UUID? {
        switch request.command {
        case "status":
            reply(ControlMessage(status: await status()).line ?? "")
            return nil
        case "tap":
            return tap.listen(reply)
        case "write":
            guard let text = request.bytes, let bytes = Data(base64Encoded: text) else {
                reply(ControlMessage(error: "write needs base64 bytes").line ?? "")
                return nil
            }
            let key = tap.listen(reply)
            do {
                try await write(Array(bytes))
                logger.notice("wrote to the receiver for a control client", metadata: ["bytes": "\(bytes.count)"])
                reply(ControlMessage(written: bytes.count).line ?? "")
            } catch {
                reply(ControlMessage(error: "cannot write to the receiver: \(error)").line ?? "")
            }
            return key
        default:
            reply(ControlMessage(error: "unknown command \(request.command ?? "(none)"): status, tap or write").line ?? "")
            return nil
        }
    }

    func hangUp(_ key: UUID) { tap.stop(key) }
}

/// One control connection: a request line in, lines out until either side closes.
private final class ControlHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let server: ControlServer
    private var buffer = ByteBuffer()
    private var started = false
    private let subscription = Subscription()

    /// The tap listener this connection holds, if any, and the lines dropped since the client last
    /// kept up.
    final class Subscription: Sendable {
        let key = Mutex<UUID?>(nil)
        let dropped = Mutex(0)
    }

    init(server: ControlServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !started else { return }  // one request a connection: the rest is not kept
        var chunk = unwrapInboundIn(data)
        buffer.writeBuffer(&chunk)
        let channel = context.channel
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > ControlServer.maxRequest {
                started = true
                let refusal = ControlMessage(error: "request longer than \(ControlServer.maxRequest) bytes without a newline: refused").line ?? ""
                channel.writeAndFlush(ByteBuffer(string: refusal)).whenComplete { _ in channel.close(promise: nil) }
                buffer.clear()
            }
            return
        }
        started = true
        let line = String(decoding: buffer.readableBytesView[..<newline], as: UTF8.self)
        buffer = ByteBuffer()
        let dropping = subscription
        let reply: @Sendable (String) -> Void = { text in
            guard channel.isWritable else {
                dropping.dropped.withLock { $0 += 1 }
                return
            }
            let missed = dropping.dropped.withLock { count in
                defer { count = 0 }
                return count
            }
            if missed > 0 {
                let notice = ControlMessage(error: "\(missed) lines dropped: this client read slower than the receiver talks").line ?? ""
                channel.write(ByteBuffer(string: notice), promise: nil)
            }
            channel.writeAndFlush(ByteBuffer(string: text), promise: nil)
        }
        guard let request = ControlMessage.parse(line) else {
            reply(ControlMessage(error: "not a JSON request").line ?? "")
            context.close(promise: nil)
            return
        }
        let server = server, subscription = subscription
        Task {
            let key = await server.answer(request, reply: reply)
            subscription.key.withLock { $0 = key }
            if key == nil {
                try? await channel.close()
            } else if let key, !channel.isActive {
                server.hangUp(key)  // the client left while the request was answered
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let key = subscription.key.withLock({ $0 }) { server.hangUp(key) }
        context.fireChannelInactive()
    }
}
