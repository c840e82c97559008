import ServiceLifecycle

/// Runs the gateway in a `ServiceGroup`. On graceful shutdown (SIGTERM/SIGINT) the gateway is
/// cancelled: a position being written finishes first (writes are shielded), the receiver is powered off.
public struct GatewayService<C: Clock>: Service where C.Duration == Duration {
    public let gateway: Gateway<C>
    public init(_ gateway: Gateway<C>) { self.gateway = gateway }

    public func run() async throws {
        try await cancelWhenGracefulShutdown { try await gateway.run() }
    }
}

/// Runs the forwarder in a `ServiceGroup` until graceful shutdown.
public struct ForwarderService<C: Clock>: Service where C.Duration == Duration {
    public let forwarder: Forwarder<C>
    public init(_ forwarder: Forwarder<C>) { self.forwarder = forwarder }

    public func run() async throws {
        try await cancelWhenGracefulShutdown { await forwarder.run() }
    }
}

/// A service made of a closure, for small jobs (status reporting, the demo's script).
public struct TaskService: Service, CustomStringConvertible {
    public let description: String
    private let body: @Sendable () async throws -> Void

    public init(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
        self.description = name
        self.body = body
    }

    /// Runs the body; a cancellation (graceful shutdown) is a normal end, not a failure.
    public func run() async throws {
        do {
            try await body()
        } catch is CancellationError {
            return
        }
    }
}
