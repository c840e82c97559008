import Foundation
import Synchronization
import TernCore

/// A serial port that can change its baud rate while open (for autobaud).
public protocol BaudRateConfigurable: Sendable {
    var baudRate: Int { get async }
    func setBaudRate(_ baudRate: Int) async throws
}

/// Something that knows the state of the link to the receiver and tells when it changes.
public protocol LinkStateReporting: Sendable {
    var linkState: ReceiverLinkState { get }
    /// The current state, then every change, until the reporter closes.
    func linkStates() -> AsyncStream<ReceiverLinkState>
    /// Calls `observer` on every change, synchronously, from whoever made it. It must return promptly.
    func observeLinkState(_ observer: @escaping @Sendable (ReceiverLinkState) -> Void)
}

/// Holds a link state and fans its changes out to streams and observers.
final class LinkStateBroadcast: Sendable {
    private struct State {
        var current: ReceiverLinkState
        var continuations: [UUID: AsyncStream<ReceiverLinkState>.Continuation] = [:]
        var observers: [@Sendable (ReceiverLinkState) -> Void] = []
        var finished = false
    }

    private let state: Mutex<State>

    init(_ initial: ReceiverLinkState) {
        state = Mutex(State(current: initial))
    }

    var current: ReceiverLinkState { state.withLock { $0.current } }

    /// Sets the state; tells everyone when it changed. Returns whether it changed.
    @discardableResult
    func update(_ next: ReceiverLinkState) -> Bool {
        let listeners = state.withLock { state -> (streams: [AsyncStream<ReceiverLinkState>.Continuation], observers: [@Sendable (ReceiverLinkState) -> Void])? in
            guard state.current != next else { return nil }
            state.current = next
            return (Array(state.continuations.values), state.observers)
        }
        guard let listeners else { return false }
        for continuation in listeners.streams { continuation.yield(next) }
        for observer in listeners.observers { observer(next) }
        return true
    }

    func stream() -> AsyncStream<ReceiverLinkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReceiverLinkState.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        let finished = state.withLock { state in
            continuation.yield(state.current)
            if !state.finished { state.continuations[id] = continuation }
            return state.finished
        }
        if finished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
            }
        }
        return stream
    }

    func observe(_ observer: @escaping @Sendable (ReceiverLinkState) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Ends every stream (the reporter closed).
    func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
