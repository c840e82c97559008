/// Keeping a serial device open, as a pure state machine: open, and when it fails or the
/// device goes away, report it and reopen with exponential backoff (no jitter: one device,
/// nobody to stampede), so a device that comes back is reopened within `Options.maximumDelay`.
///
/// Time is a `Duration` since the shell started. Feed events, perform the returned actions.
public struct ReconnectStateMachine: Sendable, Hashable {
    public struct Options: Sendable, Hashable {
        /// The wait before the first reopen; doubled after each failed attempt.
        public var initialDelay: Duration
        /// The longest wait between attempts (bounds the time to notice a returning device).
        public var maximumDelay: Duration

        public init(initialDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(2)) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
        }
    }

    public enum State: Sendable, Hashable {
        case idle
        /// An `open` was requested and its outcome is awaited.
        case opening(failures: Int)
        case connected
        /// Waiting until `until` after `failures` failed attempts in a row.
        case waiting(failures: Int, until: Duration)
        case stopped
    }

    public enum Event: Sendable, Hashable {
        case start
        case opened
        case openFailed(reason: String, now: Duration)
        case disconnected(reason: String, now: Duration)
        case timerFired(now: Duration)
        case stop
    }

    public enum Action: Sendable, Hashable {
        /// Open the device, then report `.opened` or `.openFailed`.
        case open
        /// Deliver `.timerFired` at this time (replaces any earlier request).
        case wake(at: Duration)
        /// The link state changed.
        case report(ReceiverLinkState)
        /// An event the state could not meet (a programming error in the shell): nothing changed; log it.
        case invalidEvent(String)
    }

    public let options: Options
    public private(set) var state: State = .idle
    /// The last state reported, so repeats (the same failure every retry) stay quiet.
    public private(set) var reported: ReceiverLinkState = .connecting

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Events the state could not meet (each also returned as `.invalidEvent`).
    public private(set) var invalidEvents = 0

    public mutating func handle(_ event: Event) -> [Action] {
        if case .stopped = state { return [] }  // an open or a timer in flight at the stop
        switch event {
        case .stop:
            state = .stopped
            return []
        case .start:
            guard case .idle = state else { return [] }  // a second start: already keeping it open
            state = .opening(failures: 0)
            return [.open]
        case .opened:
            guard case .opening = state else { return invalid(event) }
            state = .connected
            return report(.connected)
        case let .openFailed(reason, now):
            guard case let .opening(failures) = state else { return invalid(event) }
            return retry(after: failures + 1, now: now, reporting: .gone(reason: reason))
        case let .disconnected(reason, now):
            // A disconnect of a device not open (a late error from the port just dropped) changes nothing.
            guard case .connected = state else { return [] }
            return retry(after: 1, now: now, reporting: .gone(reason: reason))
        case let .timerFired(now):
            // Early or stale timers do nothing.
            guard case let .waiting(failures, until) = state, now >= until else { return [] }
            state = .opening(failures: failures)
            return [.open]
        }
    }

    private mutating func invalid(_ event: Event) -> [Action] {
        invalidEvents += 1
        return [.invalidEvent("ReconnectStateMachine: \(event) in state \(state)")]
    }

    /// The wait after `failures` failed attempts: initialDelay·2^(failures−1), capped.
    public func delay(failures: Int) -> Duration {
        var delay = options.initialDelay
        for _ in 1..<max(1, min(failures, 32)) where delay < options.maximumDelay {
            delay *= 2
        }
        return min(delay, options.maximumDelay)
    }

    private mutating func retry(after failures: Int, now: Duration, reporting linkState: ReceiverLinkState) -> [Action] {
        let until = now + delay(failures: failures)
        state = .waiting(failures: failures, until: until)
        return report(linkState) + [.wake(at: until)]
    }

    private mutating func report(_ linkState: ReceiverLinkState) -> [Action] {
        guard linkState != reported else { return [] }
        reported = linkState
        return [.report(linkState)]
    }
}
