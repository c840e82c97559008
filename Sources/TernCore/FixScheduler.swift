/// Decides when the receiver is powered and which fix is the position for now. Pure and
/// deterministic: feed `FixSchedulerEvent`s, perform the returned `FixSchedulerAction`s.
///
/// SKELETON (issue 4 in progress): `alwaysOn` and `fixed` work; `adaptive` behaves like `fixed` at
/// `minInterval` until the real policy lands.
public struct FixScheduler: Sendable, Hashable {
    public struct Options: Sendable, Hashable {
        public var policy: FixPolicy
        /// Give up on a fix after this long powered (no sky).
        public var acquisitionTimeout: Duration
        /// A fix is good enough when its accuracy estimate is at most this (metres).
        public var accuracyTarget: Double
        public var energy: ReceiverEnergy

        public init(
            policy: FixPolicy, acquisitionTimeout: Duration = .seconds(90), accuracyTarget: Double = 15,
            energy: ReceiverEnergy = .mt3339
        ) {
            self.policy = policy
            self.acquisitionTimeout = acquisitionTimeout
            self.accuracyTarget = accuracyTarget
            self.energy = energy
        }
    }

    public enum State: Sendable, Hashable {
        case idle
        case acquiring(since: Duration, deadline: Duration)
        case alwaysOn
        case off(until: Duration)
        case stopped
    }

    public let options: Options
    public private(set) var state: State = .idle
    private var due: Duration = .zero
    private var awaitingVerdict = false
    public private(set) var cyclesWithFix = 0
    public private(set) var timeouts = 0

    public init(options: Options) { self.options = options }

    /// Whether the receiver is meant to be powered now.
    public var isPowered: Bool {
        switch state {
        case .acquiring, .alwaysOn: true
        case .idle, .off, .stopped: false
        }
    }

    public mutating func handle(_ event: FixSchedulerEvent) -> [FixSchedulerAction] {
        switch (state, event) {
        case let (.idle, .start(now)):
            if case .alwaysOn = options.policy {
                state = .alwaysOn
                return [.powerOn]
            }
            return acquire(due: now, now: now)
        case let (.alwaysOn, .fixReceived(fix, _)) where fix.quality.isUsable:
            return [.deliver(fix)]
        case let (.acquiring, .fixReceived(fix, _)) where fix.quality.isUsable && !awaitingVerdict:
            awaitingVerdict = true
            return [.deliver(fix)]
        case let (.acquiring, .delivered(accepted, now)):
            awaitingVerdict = false
            guard accepted else { return [] }
            cyclesWithFix += 1
            return sleep(now: now)
        case let (.acquiring(_, deadline), .timerFired(now)) where now >= deadline:
            timeouts += 1
            awaitingVerdict = false
            return sleep(now: now)
        case let (.off(until), .timerFired(now)) where now >= until:
            return acquire(due: until, now: now)
        case (.stopped, _):
            return []
        case (_, .stop):
            let powered = isPowered
            state = .stopped
            return powered ? [.powerOff] : []
        default:
            return []
        }
    }

    private var interval: Duration {
        switch options.policy {
        case .alwaysOn: .zero
        case let .fixed(interval): interval
        case let .adaptive(_, minInterval, _): minInterval
        }
    }

    private mutating func acquire(due: Duration, now: Duration) -> [FixSchedulerAction] {
        self.due = due
        let deadline = now + options.acquisitionTimeout
        state = .acquiring(since: now, deadline: deadline)
        return [.powerOn, .wake(at: deadline)]
    }

    private mutating func sleep(now: Duration) -> [FixSchedulerAction] {
        var next = due + interval
        while next <= now { next += interval }
        state = .off(until: next)
        return [.powerOff, .wake(at: next)]
    }
}
