import Logging
import Synchronization
import TernCore

/// The shell around `LinkHealthMonitor` for one `NMEAReceiver`: feeds it, keeps its timer, and
/// combines its verdict with the port's own link state (when the port reports one) into the
/// receiver's `ReceiverLinkState`.
final class ReceiverLink: Sendable {
    private struct State {
        var monitor: LinkHealthMonitor
        /// The port's state: `.connected` for ports that do not report one.
        var port: ReceiverLinkState
        /// The monitor's verdict as a link state, fixed when it was reported.
        var health: ReceiverLinkState = .connected
        var autobauding = false

        var combined: ReceiverLinkState {
            if autobauding { return .autobauding }
            return port == .connected ? health : port
        }
    }

    let timer: DeadlineTimer
    /// When the line has been quiet long enough to complete the open epoch (`NMEAReceiverPump`).
    let quietTimer: DeadlineTimer
    let broadcast: LinkStateBroadcast
    private let state: Mutex<State>
    private let boundaries = Mutex(Boundary())
    private let logger: Logger

    /// Power changes and reopened ports: what the reader has not yet acted on.
    struct Boundary: Sendable, Equatable {
        /// Bumped at each power change or reopen.
        var count = 0
        /// Whether one of them was a reopen (the sentence set may differ: learn the cycle afresh).
        var reopened = false
    }

    init(port: any SerialPort, options: LinkHealthMonitor.Options, clock: some Clock<Duration>, logger: Logger) {
        let reporting = port as? any LinkStateReporting
        let initial = State(monitor: LinkHealthMonitor(options: options), port: reporting?.linkState ?? .connected)
        state = Mutex(initial)
        broadcast = LinkStateBroadcast(initial.combined)
        timer = DeadlineTimer(clock: clock)
        quietTimer = DeadlineTimer(clock: clock)
        self.logger = logger
        reporting?.observeLinkState { [weak self] linkState in self?.portChanged(linkState) }
    }

    var current: ReceiverLinkState { broadcast.current }
    var health: LinkHealthMonitor.Health { state.withLock { $0.monitor.health } }
    var now: Duration { timer.now() }

    /// The boundaries since `seen` (a `Boundary.count` from an earlier call), and the current count.
    func boundaries(since seen: Int) -> Boundary {
        boundaries.withLock { current in
            let result = current
            if current.count != seen { current.reopened = false }
            return result
        }
    }

    /// The receiver was powered on or off: whatever it said before belongs to another power cycle.
    func powerChanged(on: Bool) {
        boundaries.withLock { $0.count += 1 }
        feed(.powerChanged(on: on, now: timer.now()))
    }

    func feed(_ event: LinkHealthMonitor.Event) {
        let (actions, combined) = state.withLock { state in
            let actions = state.monitor.handle(event)
            for case let .report(health) in actions {
                state.health = Self.linkState(health, now: timer.now())
            }
            return (actions, state.combined)
        }
        for case let .wake(at) in actions { timer.schedule(at: at) }
        publish(combined)
    }

    /// The port (re)opened, went away or is connecting.
    func portChanged(_ linkState: ReceiverLinkState) {
        if linkState == .connected {
            boundaries.withLock {
                $0.count += 1
                $0.reopened = true
            }
        }
        let combined = state.withLock { state in
            state.port = linkState
            return state.combined
        }
        if linkState == .connected { feed(.linkOpened(now: timer.now())) } else { publish(combined) }
    }

    func setAutobauding(_ on: Bool) {
        publish(state.withLock { state in
            state.autobauding = on
            return state.combined
        })
    }

    private func publish(_ combined: ReceiverLinkState) {
        if broadcast.update(combined) {
            logger.notice("GPS link: \(combined)")
        }
    }

    private static func linkState(_ health: LinkHealthMonitor.Health, now: Duration) -> ReceiverLinkState {
        switch health {
        case .healthy: .connected
        case let .silent(since): .silent(seconds: (now - since).seconds)
        case .wrongBaudSuspected: .wrongBaud
        }
    }
}
