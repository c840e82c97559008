import CTernNetlink
import Foundation
import Logging
import TernCore

#if canImport(Glibc)
import Glibc
#endif

/// Connectivity from the kernel's own announcements (rtnetlink: links and IPv4/IPv6 routes), as a hint
/// to retry now; the upload itself is the proof. A link coming up or a default route appearing emits
/// `.mayBeOnline` at once (even when another default route was there: the network changed); losing the
/// last usable default route emits `.offline`. Linux removes an IPv4 default route without a message
/// when its link goes down, so every link change re-reads the routing table (`RouteConnectivity`); and
/// it is re-read every `recheck` too. Where rtnetlink cannot be opened, it polls the table instead.
public final class NetlinkConnectivity: Connectivity, Sendable {
    private let routes: RouteConnectivity
    private let recheck: Duration
    private let logger: Logger

    public init(routes: RouteConnectivity = RouteConnectivity(), recheck: Duration = .seconds(30), logger: Logger) {
        self.routes = routes
        self.recheck = recheck
        self.logger = logger
    }

    public func events() -> AsyncStream<ConnectivityEvent> {
        let fd = tern_netlink_open()
        guard fd >= 0 else {
            logger.warning(
                "cannot subscribe to the kernel's route changes (rtnetlink); polling the routing table every 5 s instead",
                metadata: ["error": "\(String(cString: strerror(errno)))"])
            return routes.events()
        }
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectivityEvent.self)
        let queue = DispatchQueue(label: "tern.netlink")
        let judge = Judge(routes: routes, continuation: continuation)
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            let mask = tern_netlink_read(fd)
            guard mask > 0 else { return }
            let changed = Int32(mask) & (Int32(TERN_NETLINK_LINK_UP.rawValue) | Int32(TERN_NETLINK_DEFAULT_ADDED.rawValue)) != 0
            judge.evaluate(networkAppeared: changed)
        }
        source.setCancelHandler { close(fd) }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let seconds = max(1, Int(recheck.components.seconds))
        timer.schedule(deadline: .now() + .seconds(seconds), repeating: .seconds(seconds))
        timer.setEventHandler { judge.evaluate(networkAppeared: false) }
        queue.async { judge.evaluate(networkAppeared: false, initial: true) }
        source.resume()
        timer.resume()
        let sources = Sources(source, timer)
        continuation.onTermination = { _ in sources.cancel() }
        return stream
    }

    /// The dispatch sources, cancelled when the stream ends (cancelling is thread-safe).
    private final class Sources: @unchecked Sendable {
        private let all: [any DispatchSourceProtocol]
        init(_ all: any DispatchSourceProtocol...) { self.all = all }
        func cancel() { all.forEach { $0.cancel() } }
    }

    /// Turns kernel changes into events; used only on the netlink queue.
    private final class Judge: @unchecked Sendable {
        private let routes: RouteConnectivity
        private let continuation: AsyncStream<ConnectivityEvent>.Continuation
        private var online: Bool?

        init(routes: RouteConnectivity, continuation: AsyncStream<ConnectivityEvent>.Continuation) {
            self.routes = routes
            self.continuation = continuation
        }

        func evaluate(networkAppeared: Bool, initial: Bool = false) {
            let now = routes.hasDefaultRoute()
            defer { online = now }
            if now, networkAppeared || online != true {
                continuation.yield(.mayBeOnline)
            } else if !now, online != false {
                continuation.yield(.offline)
            }
        }
    }
}
