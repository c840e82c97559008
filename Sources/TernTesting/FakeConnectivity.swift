import TernCore

/// Connectivity events sent by the test.
public final class FakeConnectivity: Connectivity {
    private let stream: AsyncStream<ConnectivityEvent>
    private let continuation: AsyncStream<ConnectivityEvent>.Continuation

    public init() { (stream, continuation) = AsyncStream.makeStream() }

    public func events() -> AsyncStream<ConnectivityEvent> { stream }
    public func send(_ event: ConnectivityEvent) { continuation.yield(event) }
}
