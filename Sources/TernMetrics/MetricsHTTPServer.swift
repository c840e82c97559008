import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Serves `GET /metrics` in Prometheus' text format on a TCP port (`metrics.listen`, meant for
/// loopback: a Prometheus or an SSH tunnel on the board). Each scrape asks `render` first, so the
/// figures are those of the moment. Raw SwiftNIO rather than an HTTP framework: one route, and NIO is
/// already in the binary. Bounded against a local process that opens connections and sits on them:
/// at most `maxConnections` at once (more are closed at once: a Prometheus scrapes with one), each
/// closed after `connectionDeadline`, its request and answer included (a scrape takes milliseconds), so the daemon's file descriptors stay free for the receiver and
/// the uplink.
public final class MetricsHTTPServer: Sendable {

    public typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    private let host: String
    private let requestedPort: Int
    private let render: @Sendable () async -> String
    private let logger: Logger
    private let server = Mutex<NIOAsyncChannel<Connection, Never>?>(nil)
    private let active = Mutex(0)
    private let maxConnections: Int
    private let connectionDeadline: Duration

    /// `port` 0 picks a free port (tests); `start()` tells which.
    public init(
        host: String, port: Int, maxConnections: Int = 8, connectionDeadline: Duration = .seconds(10), logger: Logger,
        render: @escaping @Sendable () async -> String
    ) {
        self.host = host
        self.maxConnections = maxConnections
        self.connectionDeadline = connectionDeadline
        requestedPort = port
        self.logger = logger
        self.render = render
    }

    /// Binds the port; returns it. Call before `run()`.
    @discardableResult
    public func start() async throws(MetricsExportError) -> Int {
        let channel: NIOAsyncChannel<Connection, Never>
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: requestedPort) { child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        return try Connection(wrappingChannelSynchronously: child)
                    }
                }
        } catch {
            throw .cannotListen("\(host):\(requestedPort)", reason: "\(error)")
        }
        server.withLock { $0 = channel }
        return channel.channel.localAddress?.port ?? requestedPort
    }

    /// Serves scrapes until the task is cancelled, then closes the port.
    public func run() async throws {
        guard let channel = server.withLock({ $0 }) else { return }
        try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await channel.executeThenClose { connections in
                    for try await connection in connections {
                        guard admit() else {
                            group.addTask { try? await connection.executeThenClose { _, _ in } }
                            continue
                        }
                        group.addTask {
                            await self.serve(connection, within: self.connectionDeadline)
                            self.active.withLock { $0 -= 1 }
                        }
                    }
                }
            }
        } onCancel: {
            channel.channel.close(promise: nil)
        }
    }

    /// Counts a new connection in, unless `maxConnections` are open already.
    private func admit() -> Bool {
        active.withLock { count in
            guard count < maxConnections else { return false }
            count += 1
            return true
        }
    }

    /// Serves `connection`, closing it after `limit` whatever it has done by then.
    private func serve(_ connection: Connection, within limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.serve(connection) }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
            connection.channel.close(promise: nil)
        }
    }

    private func serve(_ connection: Connection) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case let .head(request): head = request
                    case .body: continue
                    case .end:
                        guard let request = head else { return }
                        let (status, body) = await reply(to: request)
                        var headers = HTTPHeaders()
                        headers.add(name: "Content-Type", value: status == .ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8")
                        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
                        headers.add(name: "Connection", value: "close")
                        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
                        if request.method != .HEAD { try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body)))) }
                        try await outbound.write(.end(nil))
                        return
                    }
                }
            }
        } catch {
            logger.debug("metrics connection ended", metadata: ["error": "\(error)"])
        }
    }

    private func reply(to request: HTTPRequestHead) async -> (HTTPResponseStatus, String) {
        guard request.method == .GET || request.method == .HEAD else { return (.methodNotAllowed, "GET /metrics\n") }
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        guard path == "/metrics" || path == "/" else { return (.notFound, "tern serves GET /metrics\n") }
        return (.ok, await render())
    }
}
