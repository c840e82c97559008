/// Connectivity events announced by code: the simulated network of the demo, and tests.
public final class ManualConnectivity: Connectivity {
    private let stream: AsyncStream<ConnectivityEvent>
    private let continuation: AsyncStream<ConnectivityEvent>.Continuation

    public init() { (stream, continuation) = AsyncStream.makeStream() }

    public func events() -> AsyncStream<ConnectivityEvent> { stream }
    public func announce(_ event: ConnectivityEvent) { continuation.yield(event) }
}
