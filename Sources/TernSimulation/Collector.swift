import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import TernCore

/// A small local HTTP/1.1 server that stands in for the positions server: it records every
/// `WireBatch` POSTed to `/positions` (and OsmAnd requests at `/osmand`, as Traccar takes them),
/// dedups positions by id, and can be taken offline, brought back on the same port, made to fail,
/// slowed down, or made to misbehave request by request (`CollectorFault`).
public final class Collector: Sendable {
    private struct State: Sendable {
        var ledger = CollectorLedger()
        var boundPort: Int
        var server: (any Channel)?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var isOnline = false
        var responseDelay: Duration?
        /// Faults for the next requests, in order (one each).
        var faults: [CollectorFault] = []
        /// The chance that a request meets `randomFault`, and the generator.
        var faultRate = 0.0
        var randomFault: CollectorFault?
        var random = SplitMix64(seed: 1)
    }

    private let host: String
    private let tls: NIOSSLContext?
    private let logger: Logger
    private let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    private let state: Mutex<State>

    /// `port` 0 picks a free port at `start()`; it is kept across `goOffline()`/`goOnline()`. With
    /// `tls`, it serves https (with that context's certificate) instead of http.
    public init(host: String = "127.0.0.1", port: Int = 0, tls: NIOSSLContext? = nil, logger: Logger) {
        self.host = host
        self.tls = tls
        self.logger = logger
        state = Mutex(State(boundPort: port))
    }

    /// A server TLS context from a PEM certificate chain and its PEM private key, for `init(tls:)`.
    public static func tlsContext(certificateFile: String, keyFile: String) throws -> NIOSSLContext {
        try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))))
    }

    /// Binds and starts listening; afterwards `port` and `url` are known.
    public func start() async throws {
        try await goOnline()
    }

    /// The bound port (the requested one before `start()`).
    public var port: Int { state.withLock { $0.boundPort } }

    /// `http://HOST:PORT/positions` (https with TLS).
    public var url: URL {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        guard let url = URL(string: "\(tls == nil ? "http" : "https")://\(hostPart):\(port)\(CollectorLedger.path)") else {
            preconditionFailure("collector host \(host) does not form a valid URL")
        }
        return url
    }

    /// Stops listening and closes open connections: clients see connection refused or reset.
    public func goOffline() async throws {
        let (server, connections) = state.withLock { state in
            state.isOnline = false
            defer { state.server = nil; state.connections = [:] }
            return (state.server, Array(state.connections.values))
        }
        guard let server else { return }
        try? await server.close()
        for connection in connections { try? await connection.close() }
        logger.info("collector offline", metadata: ["port": "\(port)"])
    }

    /// Listens again on the same port (SO_REUSEADDR).
    public func goOnline() async throws {
        let alreadyOnline = state.withLock { state in
            defer { state.isOnline = true }
            return state.server != nil
        }
        if alreadyOnline { return }
        let server: any Channel
        do {
            server = try await bind()
        } catch {
            state.withLock { $0.isOnline = false }
            throw error
        }
        let boundPort = server.localAddress?.port ?? port
        state.withLock { state in
            state.server = server
            state.boundPort = boundPort
        }
        logger.info("collector online", metadata: ["url": "\(url)"])
    }

    /// Binds the kept port, or at the first start (port 0) a free one below the kernel's ephemeral
    /// range (Linux: 32768 and up): a port picked by the kernel could be taken, while the collector is
    /// offline, by any outgoing connection on the machine, and `goOnline()` could not get it back.
    private func bind() async throws -> any Channel {
        guard port == 0 else { return try await bind(port: port) }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            if let channel = try? await bind(port: Int.random(in: 10_000..<20_000, using: &random)) { return channel }
        }
        return try await bind(port: 0)
    }

    private func bind(port: Int) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = self.tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(CollectorHandler(collector: self))
                    self.track(channel)
                }
            }
            .bind(host: host, port: port).get()
    }

    /// When set, every POST is answered with `status` and nothing is recorded; `nil` restores normal service.
    public func setFailureStatus(_ status: Int?) async {
        state.withLock { $0.ledger.failureStatus = status }
    }

    /// When set, every answer is sent only after `delay` (to provoke client timeouts).
    public func setResponseDelay(_ delay: Duration?) async {
        state.withLock { $0.responseDelay = delay }
    }

    /// The next requests meet these faults, one each, in order; then normal service resumes.
    public func script(_ faults: [CollectorFault]) {
        state.withLock { $0.faults = faults }
    }

    /// From now on each request meets `fault` with probability `rate` (seeded: reproducible).
    public func injectFaults(_ fault: CollectorFault?, rate: Double, seed: UInt64 = 1) {
        state.withLock { state in
            state.randomFault = fault
            state.faultRate = rate
            state.random = SplitMix64(seed: seed)
        }
    }

    /// The fault the next request meets, if any.
    func nextFault() -> CollectorFault? {
        state.withLock { state in
            if !state.faults.isEmpty { return state.faults.removeFirst() }
            guard let fault = state.randomFault, state.random.nextUnit() < state.faultRate else { return nil }
            return fault
        }
    }

    /// Stops listening and closes every connection.
    public func stop() async throws {
        try await goOffline()
    }

    /// What the collector has received so far.
    public func snapshot() async -> CollectorSnapshot {
        state.withLock { state in
            CollectorSnapshot(
                requests: state.ledger.requests, positionsReceived: state.ledger.positionsReceived,
                duplicates: state.ledger.duplicates, unique: state.ledger.unique, isOnline: state.isOnline)
        }
    }

    // MARK: - Called from CollectorHandler on the event loop

    var responseDelay: Duration? { state.withLock { $0.responseDelay } }

    func handle(method: String, uri: String, body: Data) -> CollectorReply {
        let reply = state.withLock { $0.ledger.handle(method: method, uri: uri, body: body) }
        logger.debug(
            "collector request", metadata: ["method": "\(method)", "uri": "\(uri)", "status": "\(reply.status)"])
        return reply
    }

    private func track(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let accepted = state.withLock { state in
            guard state.isOnline else { return false }
            state.connections[key] = channel
            return true
        }
        guard accepted else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.connections.removeValue(forKey: key) }
        }
    }
}
