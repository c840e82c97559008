import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP connection to the collector: gathers a request, asks the collector, answers.
final class CollectorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let collector: Collector
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(collector: Collector) {
        self.collector = collector
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(requestHead):
            head = requestHead
            body.clear()
        case var .body(chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let requestHead = head else { return }
            head = nil
            let fault = collector.nextFault()
            switch fault {
            case .closeWithoutAnswer:
                context.close(promise: nil)
                return
            case .stall:
                return
            case let .status(status, retryAfter):
                respond(
                    CollectorReply(status: status, body: #"{"error":"simulated failure"}"#, retryAfter: retryAfter),
                    keepAlive: requestHead.isKeepAlive, version: requestHead.version, context: context)
                return
            case let .answer(status, headers, body):
                respond(
                    CollectorReply(status: status, body: body, headers: headers),
                    keepAlive: requestHead.isKeepAlive, version: requestHead.version, context: context)
                return
            default:
                break
            }
            let reply = collector.handle(
                method: requestHead.method.rawValue, uri: requestHead.uri, body: Data(body.readableBytesView))
            let keepAlive = requestHead.isKeepAlive
            if reply.closeWithoutAnswer {
                context.close(promise: nil)
                return
            }
            switch fault {
            case let .storeThenAnswer(body):
                respond(
                    CollectorReply(status: 200, body: body), keepAlive: keepAlive, version: requestHead.version, context: context)
                return
            case let .storeThenTrickle(interval):
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "application/json")
                headers.add(name: "Content-Length", value: String(reply.body.utf8.count))
                context.writeAndFlush(
                    wrapOutboundOut(.head(HTTPResponseHead(version: requestHead.version, status: .ok, headers: headers))), promise: nil)
                trickle(Array(reply.body.utf8)[...], every: interval, context: context)
                return
            case .storeThenClose:
                context.close(promise: nil)
                return
            default:
                break
            }
            if fault == .closeMidBody {
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "1000")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: requestHead.version, status: .ok, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "{\"accepted\"")))), promise: nil)
                context.close(promise: nil)
                return
            }
            if case let .slow(delay) = fault {
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay.nanoseconds)) {
                    self.respond(reply, keepAlive: keepAlive, version: requestHead.version, context: context)
                }
            } else if let delay = collector.responseDelay {
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay.nanoseconds)) {
                    self.respond(reply, keepAlive: keepAlive, version: requestHead.version, context: context)
                }
            } else {
                respond(reply, keepAlive: keepAlive, version: requestHead.version, context: context)
            }
        }
    }

    /// Sends `bytes` one at a time, `interval` apart, while the client stays.
    private func trickle(_ bytes: ArraySlice<UInt8>, every interval: Duration, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard let byte = bytes.first else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: [byte])))), promise: nil)
        context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(interval.nanoseconds)) {
            self.trickle(bytes.dropFirst(), every: interval, context: context)
        }
    }

    private func respond(
        _ reply: CollectorReply, keepAlive: Bool, version: HTTPVersion, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        for (name, value) in reply.headers.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        if !headers.contains(name: "Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        headers.add(name: "Content-Length", value: String(reply.body.utf8.count))
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        if let retryAfter = reply.retryAfter { headers.add(name: "Retry-After", value: retryAfter) }
        let status = HTTPResponseStatus(statusCode: reply.status)
        let responseHead = HTTPResponseHead(version: version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: reply.body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
