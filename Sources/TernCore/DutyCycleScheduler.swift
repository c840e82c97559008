/// The fixed-interval duty cycle, as a pure state machine: power on → first accepted fix →
/// power off → sleep until the next fix is due, with an acquisition timeout.
///
/// Time is a `Duration` since the shell started (any monotonic origin works). Feed events,
/// perform the returned actions; no I/O, no sleeping here.
public struct DutyCycleScheduler: Sendable, Hashable {
    public struct Options: Sendable, Hashable {
        /// Time between fixes. `.zero` keeps the receiver on and takes every fix.
        public var interval: Duration
        /// Give up on a fix after this long powered on.
        public var acquisitionTimeout: Duration

        public init(interval: Duration = .seconds(60), acquisitionTimeout: Duration = .seconds(90)) {
            self.interval = interval
            self.acquisitionTimeout = acquisitionTimeout
        }

        /// Whether duty-cycling is off: the receiver stays powered.
        public var isAlwaysOn: Bool { interval <= .zero }
    }

    public enum State: Sendable, Hashable {
        case idle
        /// Powered, waiting for a good fix until `deadline`; `due` is when this fix was due.
        case acquiring(due: Duration, deadline: Duration)
        case alwaysOn
        /// Powered off until `nextDue`.
        case off(nextDue: Duration)
        case stopped
    }

    public enum Event: Sendable, Hashable {
        case start(now: Duration)
        case fixAccepted(now: Duration)
        case timerFired(now: Duration)
        case stop
    }

    public enum Action: Sendable, Hashable {
        case powerOn
        case powerOff
        /// Deliver `.timerFired` at this time (replaces any earlier request).
        case wake(at: Duration)
    }

    public let options: Options
    public private(set) var state: State = .idle
    /// Power cycles that ended with a fix, and those that hit the acquisition timeout.
    public private(set) var cyclesWithFix = 0
    public private(set) var timeouts = 0

    public init(options: Options) {
        self.options = options
    }

    /// Whether a fix arriving now is wanted (the receiver is acquiring or always on).
    public var wantsFix: Bool {
        switch state {
        case .acquiring, .alwaysOn: true
        case .idle, .off, .stopped: false
        }
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case let (.idle, .start(now)):
            if options.isAlwaysOn {
                state = .alwaysOn
                return [.powerOn]
            }
            return beginAcquisition(due: now, now: now)

        case let (.acquiring(due, _), .fixAccepted(now)):
            cyclesWithFix += 1
            return sleep(after: due, now: now)

        case let (.acquiring(due, deadline), .timerFired(now)) where now >= deadline:
            timeouts += 1
            return sleep(after: due, now: now)

        case let (.off(nextDue), .timerFired(now)) where now >= nextDue:
            return beginAcquisition(due: nextDue, now: now)

        case (.stopped, _):
            return []

        case (_, .stop):
            let wasPowered = state != .idle && !isOff
            state = .stopped
            return wasPowered ? [.powerOff] : []

        default:
            // Early or stale timers, fixes nobody asked for, a second start: nothing to do.
            return []
        }
    }

    private var isOff: Bool {
        if case .off = state { return true }
        return false
    }

    private mutating func beginAcquisition(due: Duration, now: Duration) -> [Action] {
        let deadline = now + options.acquisitionTimeout
        state = .acquiring(due: due, deadline: deadline)
        return [.powerOn, .wake(at: deadline)]
    }

    /// Powers off until the next slot on the cadence `due + k·interval` that is still ahead.
    private mutating func sleep(after due: Duration, now: Duration) -> [Action] {
        var next = due + options.interval
        while next <= now { next += options.interval }
        state = .off(nextDue: next)
        return [.powerOff, .wake(at: next)]
    }
}
