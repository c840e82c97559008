/// Decides when the receiver is powered and which fix is the position for now. Pure and
/// deterministic: feed `FixSchedulerEvent`s, perform the returned `FixSchedulerAction`s.
///
/// Two parts: this acquisition cycle (power, the attempt, the fix it delivers), whose states carry
/// their own data, and the `IntervalPolicy` (when the next fix is due). The cycle:
/// off → acquiring (powered, no usable fix) → settling (usable fixes, none good enough yet) → a fix
/// is delivered → off, or tracking (kept on: break-even, ephemeris refresh), or always on.
///
/// - `alwaysOn`: powered throughout, every usable fix delivered.
/// - `fixed(interval)`: the naive duty cycle: power on every `interval` (anchored to the start), deliver
///   the first usable fix, power off; an acquisition timeout just waits for the next slot.
/// - `adaptive(errorBudget, min, max)`, Tern's policy:
///   1. Good enough: the first fix past the warm-up whose accuracy estimate ≤ `accuracyTarget`;
///      otherwise the best usable fix seen, `settleTime` after the session's first fix (or at the
///      timeout). A good-enough fix that contradicts the motion seen (`plausibility`) is confirmed
///      first: off course by the next epoch, displaced while still by a retake after `stillRecheck`.
///   2. Moving (receiver SOG ≥ 0.5 m/s, or displacement beyond noise): the next fix is due when the
///      track could bend `errorBudget × moveBudgetShare` away from the interpolating chord,
///      T = √(8·B / a), a = max(seen acceleration incl. speed × turn rate, `minAcceleration`),
///      and T ≤ `stopRisk · B / v` so that a stop inside the interval stays near the budget; after sharp
///      turns (a walker at street corners) the leg v·T ≤ 2·B·share / sin(θ/2) for the sharpest turn θ
///      seen within `cornerMemory` metres of travel.
///   3. Still: a departure costs about the interval in error, so T = `stillLegs` × budget / the usual
///      moving speed (a ship that sails at 4 m/s waits 150 s, a car at 15 m/s 40 s), growing with the
///      time still so far (`stillGrowth` ×) for long stops, clamped to [min, max]; the first moving
///      fix brings T back to (2) at once.
///   4. No sky: a hot start gives up after `hotStartTimeout` (a fix is seconds away when the sky is there)
///      unless the no-fix epochs say `satellitesForSky` satellites are heard: then the start is merely
///      slow (stale ephemeris) and may take a warm start's time. A receiver that does not report what
///      it hears gets one warm-length attempt after a first timeout instead. Retries
///      wait `noSkyGrowth` × the time since the last fix, within [`noSkyMinimumWait`, `maxBackoff`].
///      Time without sky is neither charged to the bad-time account (no interval would have shortened
///      it) nor earns it a share (p95 is over the seconds with sky); the moving interval in which the
///      sky went is charged like a departure.
///   5. Ephemeris: off past `hotStartWindow` since the last decode means a warm start (longer
///      timeout). A next fix that would fall past the window is brought forward to `refreshMargin`
///      before its end, and that cycle is stretched into an `ephemerisRefresh` tracking session
///      (cheaper than the warm start it avoids).
///   6. Break-even: when the next fix is due within the break-even time (cycle energy / tracking
///      power), the receiver stays on and the fix at the due time is delivered.
///   7. Bad-time account: every gap that closes on a start, stop, bend deeper than the interpolation's
///      share of the budget (rule 2's `moveBudgetShare`: the rest is the fixes' own error), or a still
///      thing displaced beyond the budget is charged its likely time beyond it (a start the plausibility
///      check held back for a recheck from when the held-back fix says it began); every interval is
///      capped so that one more such surprise keeps the account within `badTimeShare` of the elapsed
///      time (+ `badTimeCredit`).
///
/// Rules 1, 4's timeouts and 6 are the cycle's (here); 2, 3, 4's waits, 5's timing and 7 are the
/// `IntervalPolicy`'s. Numbers are `Options` (what the configuration sets) and `Tuning` (the rest,
/// each with its source). An event a state cannot meet is a programming error: it changes nothing
/// and comes back as `.invalidEvent`, for the shell to log.
public struct FixScheduler: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// Powered, no usable fix yet; gives up at the attempt's deadline.
        case acquiring(Attempt)
        /// Usable fixes seen but none good enough yet; the best one is taken at the deadline.
        case settling(Attempt)
        case tracking(Tracking)
        case alwaysOn(Session)
        case off(Off)
        case stopped

        /// When an `off` state ends (nil in any other state).
        public var offUntil: Duration? { if case let .off(off) = self { off.until } else { nil } }
    }

    public let options: Options
    public private(set) var state: State = .idle
    /// When the next fix is due.
    public private(set) var intervals: IntervalPolicy
    public private(set) var cyclesWithFix = 0
    public private(set) var timeouts = 0
    /// Tracking sessions stretched deliberately to refresh the ephemeris.
    public private(set) var ephemerisRefreshes = 0
    /// Times the receiver was kept on because cycling would cost more (break-even).
    public private(set) var keptOn = 0
    /// Events the state could not meet (each also returned as `.invalidEvent`).
    public private(set) var invalidEvents = 0
    /// Whether the receiver reports the satellites it hears while acquiring (then a timeout without
    /// any heard is no sky for sure).
    private var reportsSignals = false
    /// A memory to resume from at `.start`, and how long ago it was saved (`remember`).
    var remembered: Memory?
    var rememberedDowntime: Duration = .zero

    public init(options: Options) {
        self.options = options
        intervals = IntervalPolicy(policy: options.policy, tuning: options.tuning, energy: options.energy)
    }

    // MARK: Readings

    /// Whether the receiver is meant to be powered now.
    public var isPowered: Bool {
        switch state {
        case .acquiring, .settling, .tracking, .alwaysOn: true
        case .idle, .off, .stopped: false
        }
    }

    public var motion: MotionEstimate { intervals.motion }
    public var badTime: Double { intervals.badTime }
    public var skylessTime: Double { intervals.skylessTime }
    public var typicalSpeed: Double? { intervals.typicalSpeed }
    /// When the receiver last decoded the ephemeris, as far as the scheduler can tell (nil: never).
    public var ephemerisTime: Duration? { intervals.ephemerisTime }
    /// Adaptive: acquisition timeouts in a row (0 under the other policies).
    public var consecutiveTimeouts: Int {
        if case .adaptive = options.policy { intervals.missedInARow } else { 0 }
    }
    var startedAt: Duration? { intervals.startedAt }

    /// The adaptive interval after a fix at `now`.
    public func interval(now: Duration) -> Duration { intervals.interval(now: now) }

    /// Seconds of staying on that cost as much as one power cycle (inrush + hot acquisition).
    public var breakEven: Duration {
        let e = options.energy
        let ttff = e.hotStartTTFF.seconds
        let inrush = min(ttff, e.inrushDuration.seconds)
        let cycle = e.acquisitionCurrent * ttff + max(0, e.inrushCurrent - e.acquisitionCurrent) * inrush
        return .seconds(cycle / max(e.trackingCurrent, 1e-9))
    }

    // MARK: Events

    public mutating func handle(_ event: FixSchedulerEvent) -> [FixSchedulerAction] {
        switch event {
        case let .start(now): start(now: now)
        case let .fixReceived(fix, now): fixReceived(fix, now: now)
        case let .delivered(accepted, now): delivered(accepted: accepted, now: now)
        case let .timerFired(now): timerFired(now: now)
        case .stop: stop()
        }
    }

    private mutating func start(now: Duration) -> [FixSchedulerAction] {
        switch state {
        case .idle:
            intervals.startedAt = now
            if let remembered {
                intervals.resume(remembered, downtime: rememberedDowntime, now: now)
                self.remembered = nil
            }
            if case .alwaysOn = options.policy {
                state = .alwaysOn(Session(poweredAt: now, due: now))
                return [.powerOn]
            }
            return acquire(due: now, now: now, recheck: false)
        case .acquiring, .settling, .tracking, .alwaysOn, .off, .stopped:
            return invalid(.start(now: now))
        }
    }

    private mutating func fixReceived(_ fix: Fix, now: Duration) -> [FixSchedulerAction] {
        switch state {
        case var .alwaysOn(session):
            guard fix.quality.isUsable else { return [] }
            noteSessionFix(&session, now: now)
            session.awaiting = fix
            state = .alwaysOn(session)
            return [.deliver(fix)]
        case var .acquiring(attempt):
            guard fix.quality.isUsable else { return satellitesHeard(fix, attempt: attempt) }
            noteSessionFix(&attempt.session, now: now)
            return usableFix(fix, attempt: attempt, now: now)
        case var .settling(attempt):
            guard fix.quality.isUsable else { return [] }
            noteSessionFix(&attempt.session, now: now)
            return usableFix(fix, attempt: attempt, now: now)
        case var .tracking(tracking):
            guard fix.quality.isUsable else { return [] }
            noteSessionFix(&tracking.session, now: now)
            guard now >= tracking.until, tracking.session.awaiting == nil else {
                state = .tracking(tracking)
                return []
            }
            tracking.session.awaiting = fix
            state = .tracking(tracking)
            return [.deliver(fix)]
        case .stopped:
            return []
        case .idle, .off:
            // The gateway hands the scheduler fixes only while it has the receiver powered.
            return invalid(.fixReceived(fix, now: now))
        }
    }

    private mutating func delivered(accepted: Bool, now: Duration) -> [FixSchedulerAction] {
        switch state {
        case let .alwaysOn(session):
            if accepted, let fix = session.awaiting {
                cyclesWithFix += 1
                intervals.motion.update(with: fix, at: now)
            }
            return []
        case var .acquiring(attempt), var .settling(attempt):
            guard let fix = attempt.session.awaiting else { return invalid(.delivered(accepted: accepted, now: now)) }
            attempt.session.awaiting = nil
            if accepted { return gotFix(fix, session: attempt.session, now: now) }
            if attempt.deliveringFallback { return timedOut(session: attempt.session, now: now) }
            state = Self.same(state, attempt)
            return []
        case var .tracking(tracking):
            guard let fix = tracking.session.awaiting else { return invalid(.delivered(accepted: accepted, now: now)) }
            tracking.session.awaiting = nil
            if accepted { return gotFix(fix, session: tracking.session, now: now) }
            state = .tracking(tracking)
            return []
        case .stopped:
            return []
        case .idle, .off:
            return invalid(.delivered(accepted: accepted, now: now))
        }
    }

    private mutating func timerFired(now: Duration) -> [FixSchedulerAction] {
        switch state {
        case var .acquiring(attempt), var .settling(attempt):
            // Early (a wake-up since replaced), or a verdict still awaited: nothing yet.
            guard now >= attempt.deadline, attempt.session.awaiting == nil else { return [] }
            guard let fallback = attempt.best else { return timedOut(session: attempt.session, now: now) }
            attempt.best = nil
            attempt.deliveringFallback = true
            attempt.session.awaiting = fallback
            state = Self.same(state, attempt)
            return [.deliver(fallback)]
        case let .tracking(tracking):
            // Lost the sky while tracking: count it as a timeout.
            guard now >= tracking.until + options.acquisitionTimeout else { return [] }
            return timedOut(session: tracking.session, now: now)
        case let .off(off):
            guard now >= off.until else { return [] }
            return acquire(due: off.until, now: now, recheck: off.recheck)
        case .stopped:
            return []
        case .idle, .alwaysOn:
            // Neither asks for a wake-up.
            return invalid(.timerFired(now: now))
        }
    }

    private mutating func stop() -> [FixSchedulerAction] {
        let powered = isPowered
        state = .stopped
        return powered ? [.powerOff] : []
    }

    private mutating func invalid(_ event: FixSchedulerEvent) -> [FixSchedulerAction] {
        invalidEvents += 1
        return [.invalidEvent("FixScheduler: \(event) in state \(state)")]
    }

    /// `state` with its attempt replaced (acquiring stays acquiring, settling settling).
    private static func same(_ state: State, _ attempt: Attempt) -> State {
        if case .settling = state { .settling(attempt) } else { .acquiring(attempt) }
    }

    // MARK: The cycle's steps

    /// A usable fix while acquiring or settling (`state` still the one it arrived in).
    private mutating func usableFix(_ fix: Fix, attempt: Attempt, now: Duration) -> [FixSchedulerAction] {
        var attempt = attempt
        guard attempt.session.awaiting == nil else {
            state = Self.same(state, attempt)
            return []
        }
        if isGoodEnough(fix, session: attempt.session, now: now) {
            // A fix that contradicts the motion seen is confirmed first (`PlausibilityCheck.Suspicion`).
            guard case .adaptive = options.policy, let check = options.plausibility,
                  let suspicion = check.suspicion(of: fix, at: now, motion: intervals.motion)
            else { return deliver(fix, attempt: attempt) }
            switch suspicion {
            case .offCourse:
                if let earlier = attempt.suspect, check.agree(earlier, fix) { return deliver(fix, attempt: attempt) }
                attempt.suspect = fix
                state = .settling(attempt)
                return []
            case .movedWhileStill:
                // The next epoch would repeat a lasting error: ask again once it has changed (no
                // later than the next fix was due anyway), and take what that fix says.
                if attempt.rechecking { return deliver(fix, attempt: attempt) }
                intervals.moveSeen(fix, at: now)
                return sleep(until: now + min(check.stillRecheck, intervals.interval(now: now)), recheck: true)
            }
        }
        // The fallback at the deadline is the best fix past the warm-up (the filter would skip the others).
        let warmedUp = options.warmUp.rejection(of: fix, context: FilterContext(sessionAge: attempt.session.firstFixAt.map { now - $0 }), stillAt: stillAnchor) == nil
        if warmedUp, attempt.best.map({ accuracy(of: fix) < accuracy(of: $0) }) ?? true { attempt.best = fix }
        // Past the warm-up the estimate follows the satellite geometry, which changes over minutes:
        // waiting longer for a better one only costs energy and leaves the track uncovered.
        let deadline = attempt.deadline
        let settleBy = min(deadline, (attempt.session.firstFixAt ?? now) + options.tuning.settleTime)
        attempt.deadline = settleBy
        state = .settling(attempt)
        return settleBy < deadline ? [.wake(at: settleBy)] : []
    }

    /// A no-fix epoch while acquiring: satellites heard mean the sky is there, the start is just slow (warm).
    private mutating func satellitesHeard(_ fix: Fix, attempt: Attempt) -> [FixSchedulerAction] {
        guard let heard = fix.satellitesHeard else { return [] }
        reportsSignals = true
        guard case .adaptive = options.policy, !attempt.heardSky, heard >= options.tuning.satellitesForSky else { return [] }
        var attempt = attempt
        attempt.heardSky = true
        let warm = attempt.session.poweredAt + max(options.acquisitionTimeout, options.tuning.staleEphemerisTimeout)
        guard warm > attempt.deadline else {
            state = .acquiring(attempt)
            return []
        }
        attempt.deadline = warm
        state = .acquiring(attempt)
        return [.wake(at: warm)]
    }

    private mutating func deliver(_ fix: Fix, attempt: Attempt) -> [FixSchedulerAction] {
        var attempt = attempt
        attempt.session.awaiting = fix
        state = Self.same(state, attempt)
        return [.deliver(fix)]
    }

    private mutating func acquire(due: Duration, now: Duration, recheck: Bool) -> [FixSchedulerAction] {
        // Stale as far as the scheduler knows; and once after a timeout when the receiver does not say
        // what it hears: the miss may have been a warm start the scheduler did not expect (the receiver
        // lost its ephemeris), not a missing sky.
        let stale = intervals.ephemerisIsStale(now: now) || (consecutiveTimeouts == 1 && !reportsSignals)
        var timeout = stale ? max(options.acquisitionTimeout, options.tuning.staleEphemerisTimeout) : options.acquisitionTimeout
        if case .adaptive = options.policy, !stale { timeout = min(timeout, options.hotStartTimeout) }
        let deadline = now + timeout
        state = .acquiring(Attempt(session: Session(poweredAt: now, due: due), deadline: deadline, rechecking: recheck))
        return [.powerOn, .wake(at: deadline)]
    }

    /// The session's first usable fix, or continuous tracking since: what the ephemeris estimate learns.
    private mutating func noteSessionFix(_ session: inout Session, now: Duration) {
        intervals.sessionFix(poweredAt: session.poweredAt, first: session.firstFixAt, now: now)
        if session.firstFixAt == nil { session.firstFixAt = now }
    }

    private mutating func gotFix(_ fix: Fix, session: Session, now: Duration) -> [FixSchedulerAction] {
        cyclesWithFix += 1
        intervals.fixTaken(fix, now: now)
        var next = intervals.nextDue(slot: session.due, now: now)
        if case .adaptive = options.policy {
            next = intervals.keepingTheEphemeris(next, now: now)
            // Ephemeris refresh: the next fix would fall past the hot window: track on now instead.
            if intervals.shouldRefresh(next: next, sessionFirstFix: session.firstFixAt, now: now), let first = session.firstFixAt {
                ephemerisRefreshes += 1
                let until = first + options.energy.ephemerisRefresh
                state = .tracking(Tracking(session: session, until: until))
                return [.wake(at: until + options.acquisitionTimeout)]
            }
            if next - now <= breakEven {
                keptOn += 1
                state = .tracking(Tracking(session: session, until: next))
                return [.wake(at: next + options.acquisitionTimeout)]
            }
        }
        return sleep(until: next)
    }

    private mutating func timedOut(session: Session, now: Duration) -> [FixSchedulerAction] {
        timeouts += 1
        intervals.noSky(poweredAt: session.poweredAt)
        switch options.policy {
        case .fixed, .alwaysOn:
            return sleep(until: intervals.nextDue(slot: session.due, now: now))
        case .adaptive:
            return sleep(until: now + intervals.waitAfterNoSky(now: now))
        }
    }

    private mutating func sleep(until next: Duration, recheck: Bool = false) -> [FixSchedulerAction] {
        state = .off(Off(until: next, recheck: recheck))
        return [.powerOff, .wake(at: next)]
    }

    /// Where the thing was last seen still, as the warm-up asks (the filter's anchor is its last accepted fix).
    private var stillAnchor: StillAnchor? {
        guard let last = intervals.motion.last, last.speed < options.warmUp.stillSpeed else { return nil }
        return StillAnchor(coordinate: last.coordinate, accuracy: last.accuracy)
    }

    /// A fix that estimates nothing ranks as accurate: the receiver's own verdict (a usable fix) stands.
    private func accuracy(of fix: Fix) -> Double {
        fix.accuracyEstimate ?? 0
    }

    /// Adaptive: accurate enough by its own estimate, and past the filter's warm-up (the same
    /// `WarmUpRule`, so the scheduler never delivers a fix the filter would skip as warming up).
    private func isGoodEnough(_ fix: Fix, session: Session, now: Duration) -> Bool {
        if case .fixed = options.policy { return true }
        let age = session.firstFixAt.map { now - $0 }
        return accuracy(of: fix) <= options.accuracyTarget
            && options.warmUp.rejection(of: fix, context: FilterContext(sessionAge: age), stillAt: stillAnchor) == nil
    }
}
