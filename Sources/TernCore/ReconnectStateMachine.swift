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
    }

    public let options: Options
    public private(set) var state: State = .idle
    /// The last state reported, so repeats (the same failure every retry) stay quiet.
    public private(set) var reported: ReceiverLinkState = .connecting

    public init(options: Options = Options()) {
        self.options = options
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.stopped, _):
            return []
        case (_, .stop):
            state = .stopped
            return []

        case (.idle, .start):
            state = .opening(failures: 0)
            return [.open]

        case (.opening, .opened):
            state = .connected
            return report(.connected)
        case let (.opening(failures), .openFailed(reason, now)):
            return retry(after: failures + 1, now: now, reporting: .gone(reason: reason))

        case let (.connected, .disconnected(reason, now)):
            return retry(after: 1, now: now, reporting: .gone(reason: reason))

        case let (.waiting(failures, until), .timerFired(now)) where now >= until:
            state = .opening(failures: failures)
            return [.open]

        default:
            // Early or stale timers, a second start, a disconnect of a device not open: nothing to do.
            return []
        }
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
