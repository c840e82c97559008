import Foundation

public enum ConnectivityEvent: Sendable, Hashable {
    /// The network may be back: worth trying an upload now.
    case mayBeOnline
    case offline
}

/// Tells when the network may be back.
public protocol Connectivity: Sendable {
    func events() -> AsyncStream<ConnectivityEvent>
}
