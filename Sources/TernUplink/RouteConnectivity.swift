import Foundation
import TernCore

/// Connectivity from the kernel's routing table: online may be possible only with a default route.
///
/// Polls `/proc/self/net/route` and `…/ipv6_route` (this network namespace's; `/proc/net` is hidden
/// under the unit's `ProcSubset=pid`) every `interval`; emits the current state
/// once, then `.mayBeOnline` when a default route appears and `.offline` when it disappears.
public struct RouteConnectivity: Connectivity {
    private let interval: Duration
    private let clock: any Clock<Duration>
    private let ipv4Path: String
    private let ipv6Path: String

    public init(
        interval: Duration = .seconds(5), clock: any Clock<Duration> = ContinuousClock(),
        ipv4Path: String = "/proc/self/net/route", ipv6Path: String = "/proc/self/net/ipv6_route"
    ) {
        self.interval = interval
        self.clock = clock
        self.ipv4Path = ipv4Path
        self.ipv6Path = ipv6Path
    }

    /// Whether a default route exists right now whose interface is not down (a missing table counts
    /// as none; an interface whose state cannot be read counts as usable).
    public func hasDefaultRoute() -> Bool {
        let interfaces = RouteTable.defaultRouteInterfaces(ipv4: Self.read(ipv4Path))
            + RouteTable.defaultRouteInterfaces(ipv6: Self.read(ipv6Path))
        return interfaces.contains { interface in
            let state = Self.read("/sys/class/net/\(interface)/operstate")
            return state.isEmpty || RouteTable.isUsable(operstate: state)
        }
    }

    public func events() -> AsyncStream<ConnectivityEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectivityEvent.self)
        let task = Task { [self] in
            var last: Bool?
            while !Task.isCancelled {
                let online = hasDefaultRoute()
                if online != last {
                    continuation.yield(online ? .mayBeOnline : .offline)
                    last = online
                }
                do { try await clock.sleep(for: interval) } catch { break }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    static func read(_ path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        let data = (try? handle.readToEnd()) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
