import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP server standing in for an OwnTracks Recorder: records every request and answers
/// from a script (then 200 `[]`, as the Recorder does).
final class RecorderStub: Sendable {
    struct Request: Sendable {
        var method: String
        var uri: String
        var headers: [String: String]
        var body: [UInt8]
    }

    struct Reply: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body = ""
    }

    /// What the server has seen and will answer, shared with the connection handlers.
    private final class Ledger: Sendable {
        private struct State {
            var requests: [Request] = []
            var script: [Reply]
        }

        private let state: Mutex<State>

        init(script: [Reply]) { state = Mutex(State(script: script)) }

        var requests: [Request] { state.withLock { $0.requests } }

        func answer(_ request: Request) -> Reply {
            state.withLock { state in
                state.requests.append(request)
                return state.script.isEmpty ? Reply(status: 200, body: "[]") : state.script.removeFirst()
            }
        }
    }

    private let ledger: Ledger
    private let server: any Channel

    private init(ledger: Ledger, server: any Channel) {
        self.ledger = ledger
        self.server = server
    }

    /// Started on a free port of 127.0.0.1; `replies` answer the first requests in order.
    static func start(replies: [Reply] = []) async throws -> RecorderStub {
        let ledger = Ledger(script: replies)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(ledger: ledger))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RecorderStub(ledger: ledger, server: server)
    }

    var url: URL {
        URL(string: "http://127.0.0.1:\(server.localAddress?.port ?? 0)/pub") ?? URL(fileURLWithPath: "/")
    }

    var requests: [Request] { ledger.requests }

    /// Stops listening (again: no effect).
    func stop() async throws {
        guard server.isActive else { return }
        try await server.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let ledger: Ledger
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(ledger: Ledger) { self.ledger = ledger }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case let .head(requestHead):
                head = requestHead
                body = []
            case let .body(chunk):
                body += chunk.readableBytesView
            case .end:
                guard let head else { return }
                let headers = Dictionary(head.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
                let reply = ledger.answer(Request(method: head.method.rawValue, uri: head.uri, headers: headers, body: body))
                var responseHeaders = HTTPHeaders(reply.headers.map { ($0.key, $0.value) })
                responseHeaders.add(name: "Content-Length", value: "\(reply.body.utf8.count)")
                let status = HTTPResponseStatus(statusCode: reply.status)
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: responseHeaders))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: reply.body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
