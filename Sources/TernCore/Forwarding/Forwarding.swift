import Foundation

/// What the gateway tells the forwarder: new positions are in the queue. Must return promptly.
public protocol Forwarding: Sendable {
    func positionsAvailable()
}
