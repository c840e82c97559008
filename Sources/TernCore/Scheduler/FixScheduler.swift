/// Decides when the receiver is powered and which fix is the position for now. Pure and
/// deterministic: feed `FixSchedulerEvent`s, perform the returned `FixSchedulerAction`s.
///
/// A cycle: off → acquiring (powered, no usable fix) → settling (usable fixes, none good enough yet)
/// → a fix is delivered → off, or tracking (kept on: break-even, ephemeris refresh, always-on).
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
///   7. Bad-time account: every gap that closes on a start, stop, bend deeper than the budget, or a
///      still thing displaced beyond it is charged its likely time beyond the budget; every interval is capped so that one more such
///      surprise keeps the account within `badTimeShare` of the elapsed time (+ `badTimeCredit`).
public struct FixScheduler: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// Powered since `since`, no usable fix yet; gives up at `deadline`.
        case acquiring(since: Duration, deadline: Duration)
        /// Usable fixes seen but none good enough yet; the best one is taken at `deadline`.
        case settling(since: Duration, deadline: Duration)
        /// Kept on after a fix; the next fix is delivered at `until` (break-even or ephemeris refresh).
        case tracking(until: Duration)
        case alwaysOn
        case off(until: Duration)
        case stopped

        /// When an `off` state ends (nil in any other state).
        public var offUntil: Duration? { if case let .off(until) = self { until } else { nil } }
    }

    public let options: Options
    public private(set) var state: State = .idle
    public internal(set) var motion: MotionEstimate
    public private(set) var cyclesWithFix = 0
    public private(set) var timeouts = 0
    /// Tracking sessions stretched deliberately to refresh the ephemeris.
    public private(set) var ephemerisRefreshes = 0
    /// Times the receiver was kept on because cycling would cost more (break-even).
    public private(set) var keptOn = 0
    /// Acquisition timeouts in a row (the back-off exponent).
    public private(set) var consecutiveTimeouts = 0
    /// When the receiver last decoded the ephemeris, as far as the scheduler can tell (nil: never).
    public internal(set) var ephemerisTime: Duration?

    private var due: Duration = .zero
    private var awaitingVerdict = false
    private var deliveringFallback = false
    private var best: Fix?
    /// Adaptive: a good-enough fix that contradicted the motion seen, waiting for the next to confirm it.
    private var suspect: Fix?
    /// Adaptive: this attempt re-takes a still thing's fix that was displaced beyond the noise.
    private var rechecking = false
    private var poweredAt: Duration = .zero
    /// The first fix of the current powered session (continuous tracking since then).
    private var sessionFixAt: Duration?
    var startedAt: Duration?
    private var lastFixAt: Duration?
    private var timeoutsAtLastFix = 0
    /// Whether the receiver reports the satellites it hears while acquiring (then a timeout without
    /// any heard is no sky for sure), and whether the current attempt heard enough of them.
    private var reportsSignals = false
    private var heardSky = false
    /// Adaptive: estimated seconds so far in which the interpolated track was off by more than the budget.
    public internal(set) var badTime: Double = 0
    /// Adaptive: seconds without sky so far (from a failed attempt to the next fix); they earn no
    /// share in the bad-time account.
    public internal(set) var skylessTime: Double = 0
    /// When the first attempt of the current run of timeouts began (nil: the last attempt got a fix).
    private var skyLostAt: Duration?
    /// Adaptive: the speed the thing usually moves at (smoothed over moving fixes), m/s.
    public internal(set) var typicalSpeed: Double?
    /// Seconds with sky the bad-time account ran before a restart (`Memory`).
    var earnedBefore: Double = 0
    /// A memory to resume from at `.start`, and how long ago it was saved (`remember`).
    var remembered: Memory?
    var rememberedDowntime: Duration = .zero

    public init(options: Options) {
        self.options = options
        motion = MotionEstimate(cornerMemory: options.cornerMemory)
    }

    /// Whether the receiver is meant to be powered now.
    public var isPowered: Bool {
        switch state {
        case .acquiring, .settling, .tracking, .alwaysOn: true
        case .idle, .off, .stopped: false
        }
    }

    /// Seconds of staying on that cost as much as one power cycle (inrush + hot acquisition).
    public var breakEven: Duration {
        let e = options.energy
        let ttff = e.hotStartTTFF.seconds
        let inrush = min(ttff, e.inrushDuration.seconds)
        let cycle = e.acquisitionCurrent * ttff + max(0, e.inrushCurrent - e.acquisitionCurrent) * inrush
        return .seconds(cycle / max(e.trackingCurrent, 1e-9))
    }

    public mutating func handle(_ event: FixSchedulerEvent) -> [FixSchedulerAction] {
        switch (state, event) {
        case (.stopped, _):
            return []
        case (_, .stop):
            let powered = isPowered
            state = .stopped
            return powered ? [.powerOff] : []

        case let (.idle, .start(now)):
            startedAt = now
            resume(now: now)
            if case .alwaysOn = options.policy {
                state = .alwaysOn
                poweredAt = now
                return [.powerOn]
            }
            return acquire(due: now, now: now)

        case let (.alwaysOn, .fixReceived(fix, now)) where fix.quality.isUsable:
            noteTracking(now: now)
            lastDelivered = fix
            return [.deliver(fix)]
        case let (.alwaysOn, .delivered(accepted, now)):
            if accepted, let fix = lastDelivered {
                cyclesWithFix += 1
                motion.update(with: fix, at: now)
            }
            return []

        case let (.acquiring(since, deadline), .fixReceived(fix, now)) where fix.quality.isUsable,
             let (.settling(since, deadline), .fixReceived(fix, now)) where fix.quality.isUsable:
            noteTracking(now: now)
            guard !awaitingVerdict else { return [] }
            if isGoodEnough(fix, now: now) {
                // A fix that contradicts the motion seen is confirmed first (`PlausibilityCheck.Suspicion`).
                guard case .adaptive = options.policy, let check = options.plausibility,
                      let suspicion = check.suspicion(of: fix, at: now, motion: motion)
                else { return deliver(fix) }
                switch suspicion {
                case .offCourse:
                    if let earlier = suspect, check.agree(earlier, fix) { return deliver(fix) }
                    suspect = fix
                    state = .settling(since: since, deadline: deadline)
                    return []
                case .movedWhileStill:
                    // The next epoch would repeat a lasting error: ask again once it has changed (no
                    // later than the next fix was due anyway), and take what that fix says.
                    if rechecking { return deliver(fix) }
                    rechecking = true
                    return sleep(until: now + min(check.stillRecheck, interval(now: now)))
                }
            }
            // The fallback at the deadline is the best fix past the warm-up (the filter would skip the others).
            let warmedUp = options.warmUp.rejection(of: fix, context: FilterContext(sessionAge: sessionFixAt.map { now - $0 })) == nil
            if warmedUp, best.map({ accuracy(of: fix) < accuracy(of: $0) }) ?? true { best = fix }
            // Past the warm-up the estimate follows the satellite geometry, which changes over minutes:
            // waiting longer for a better one only costs energy and leaves the track uncovered.
            let settleBy = min(deadline, (sessionFixAt ?? now) + options.settleTime)
            state = .settling(since: since, deadline: settleBy)
            return settleBy < deadline ? [.wake(at: settleBy)] : []

        case let (.acquiring(since, deadline), .fixReceived(fix, _)):
            // Still acquiring: satellites heard mean the sky is there, the start is just slow (warm).
            guard let heard = fix.satellitesHeard else { return [] }
            reportsSignals = true
            guard case .adaptive = options.policy, !heardSky, heard >= options.satellitesForSky else { return [] }
            heardSky = true
            let warm = since + max(options.acquisitionTimeout, options.staleEphemerisTimeout)
            guard warm > deadline else { return [] }
            state = .acquiring(since: since, deadline: warm)
            return [.wake(at: warm)]

        case let (.acquiring, .delivered(accepted, now)), let (.settling, .delivered(accepted, now)):
            awaitingVerdict = false
            if accepted { return gotFix(now: now) }
            if deliveringFallback { return timedOut(now: now) }
            return []

        case let (.acquiring(_, deadline), .timerFired(now)) where now >= deadline,
             let (.settling(_, deadline), .timerFired(now)) where now >= deadline:
            if !awaitingVerdict, let fallback = best {
                best = nil
                deliveringFallback = true
                return deliver(fallback)
            }
            return awaitingVerdict ? [] : timedOut(now: now)

        case let (.tracking(until), .fixReceived(fix, now)) where fix.quality.isUsable:
            noteTracking(now: now)
            guard now >= until, !awaitingVerdict else { return [] }
            return deliver(fix)
        case let (.tracking, .delivered(accepted, now)):
            awaitingVerdict = false
            if accepted { return gotFix(now: now) }
            return []
        case let (.tracking(until), .timerFired(now)) where now >= until + options.acquisitionTimeout:
            // Lost the sky while tracking: count it as a timeout.
            return timedOut(now: now)

        case let (.off(until), .timerFired(now)) where now >= until:
            return acquire(due: until, now: now)

        default:
            return []
        }
    }

    // MARK: - Cycle steps

    private var lastDelivered: Fix?

    private mutating func deliver(_ fix: Fix) -> [FixSchedulerAction] {
        awaitingVerdict = true
        lastDelivered = fix
        return [.deliver(fix)]
    }

    private mutating func acquire(due: Duration, now: Duration) -> [FixSchedulerAction] {
        self.due = due
        poweredAt = now
        sessionFixAt = nil
        best = nil
        suspect = nil
        deliveringFallback = false
        heardSky = false
        // Stale as far as the scheduler knows; and once after a timeout when the receiver does not say
        // what it hears: the miss may have been a warm start the scheduler did not expect (the receiver
        // lost its ephemeris), not a missing sky.
        let stale = (ephemerisTime.map { now - $0 > options.energy.hotStartWindow } ?? true)
            || (consecutiveTimeouts == 1 && !reportsSignals)
        var timeout = stale ? max(options.acquisitionTimeout, options.staleEphemerisTimeout) : options.acquisitionTimeout
        if case .adaptive = options.policy, !stale { timeout = min(timeout, options.hotStartTimeout) }
        let deadline = now + timeout
        state = .acquiring(since: now, deadline: deadline)
        return [.powerOn, .wake(at: deadline)]
    }

    /// Tracks continuous fixes: a slow first fix means the receiver decoded the ephemeris; so does
    /// `ephemerisRefresh` of continuous tracking.
    private mutating func noteTracking(now: Duration) {
        guard let first = sessionFixAt else {
            sessionFixAt = now
            if now - poweredAt > max(options.energy.hotStartTTFF * 6, options.energy.warmStartTTFF / 2) { ephemerisTime = now }
            return
        }
        if now - first >= options.energy.ephemerisRefresh {
            ephemerisTime = now
        }
    }

    private mutating func gotFix(now: Duration) -> [FixSchedulerAction] {
        cyclesWithFix += 1
        rechecking = false
        consecutiveTimeouts = 0
        deliveringFallback = false
        best = nil
        if let fix = lastDelivered {
            let wasStill = motion.isStill
            motion.update(with: fix, at: now)
            accountBadTime(wasStill: wasStill, now: now)
        }
        lastFixAt = now
        skyLostAt = nil
        timeoutsAtLastFix = timeouts
        var next = nextDue(now: now)
        let e = options.energy
        if case .adaptive = options.policy {
            // Spend the ephemeris to the end: a next fix past the window comes forward to just inside
            // it, and that cycle refreshes (one refresh a window, not one a window less an interval).
            if let decoded = ephemerisTime, next - decoded > e.hotStartWindow, refreshIsWorthwhile(next - now) {
                let last = decoded + e.hotStartWindow - options.refreshMargin
                if last > now { next = last }
            }
            // Ephemeris refresh: the next fix would fall past the hot window: track on now instead.
            if let first = sessionFixAt, let decoded = ephemerisTime,
               next - decoded > e.hotStartWindow, now - first < e.ephemerisRefresh, refreshIsWorthwhile(next - now) {
                ephemerisRefreshes += 1
                let until = first + e.ephemerisRefresh
                state = .tracking(until: until)
                return [.wake(at: until + options.acquisitionTimeout)]
            }
            if next - now <= breakEven {
                keptOn += 1
                state = .tracking(until: next)
                return [.wake(at: next + options.acquisitionTimeout)]
            }
        }
        return sleep(until: next)
    }

    /// Charges the gap just closed with the time its interpolation likely spent beyond the budget:
    /// a start or stop inside it (all but the time to cover 2 budgets), or a bend deeper than the budget.
    private mutating func accountBadTime(wasStill: Bool, now: Duration) {
        // A gap without sky is not the interval's doing: a shorter interval would not have shortened it.
        guard case let .adaptive(budget, _, _) = options.policy, let since = lastFixAt, now > since else { return }
        guard timeoutsAtLastFix == timeouts else {
            // …nor does it count as time the track was right (p95 is over the seconds with sky).
            skylessTime += (now - (skyLostAt ?? since)).seconds
            return
        }
        let gap = (now - since).seconds
        if !motion.isStill, motion.speed >= motion.stillSpeed {
            typicalSpeed = typicalSpeed.map { $0 + options.speedSmoothing * (motion.speed - $0) } ?? motion.speed
        }
        let v = max(motion.speed, motion.previous?.speed ?? 0, 0.1)
        if wasStill != motion.isStill, motion.previous != nil {
            badTime += max(0, gap - 2 * budget / v)
        } else if motion.isStill, let a = motion.previous, let b = motion.last {
            // Still at both ends yet displaced by d: a move at an unknown time inside the gap (or an
            // error that lasted) keeps the chord beyond the budget for (1 − budget/d)² of it on average.
            let d = Geodesy.distance(a.coordinate, b.coordinate)
            if d > budget { badTime += gap * (1 - budget / d) * (1 - budget / d) }
        } else if !motion.isStill {
            let bend = motion.acceleration * gap * gap / 8
            if bend > budget { badTime += gap * (1 - budget / bend).squareRoot() }
        }
    }

    /// Adaptive: the bad-time account (seconds the track was likely off by more than the budget) and
    /// what the policy allows it (`badTimeShare` of the time with sky, plus `badTimeCredit`).
    func offBudget(now: Duration) -> (seconds: Double, allowed: Double)? {
        guard case .adaptive = options.policy, startedAt != nil else { return nil }
        return (badTime, options.badTimeShare * (timeWithSky(now: now) + options.badTimeCredit.seconds))
    }

    /// Seconds with sky so far, this run and the runs before a restart: what earns the account its share.
    func timeWithSky(now: Duration) -> Double {
        earnedBefore + (now - (startedAt ?? now)).seconds - skylessTime
    }

    /// The longest interval that keeps the bad-time account within `badTimeShare` should it go wrong.
    private func badTimeCap(now: Duration) -> Double {
        let share = options.badTimeShare
        guard share > 0, share < 1 else { return .infinity }
        let elapsed = timeWithSky(now: now) + options.badTimeCredit.seconds
        return max(0, share * elapsed - badTime) / (1 - share)
    }

    private func refreshIsWorthwhile(_ interval: Duration) -> Bool {
        let e = options.energy
        guard interval < e.hotStartWindow else { return false }
        // A warm start also lands the fix its TTFF late, at a time nobody chose: worth a quarter more.
        let refresh = e.trackingCurrent * e.ephemerisRefresh.seconds
        let warm = e.acquisitionCurrent * e.warmStartTTFF.seconds
        return refresh <= 1.25 * warm
    }

    private mutating func timedOut(now: Duration) -> [FixSchedulerAction] {
        timeouts += 1
        rechecking = false
        awaitingVerdict = false
        deliveringFallback = false
        best = nil
        sessionFixAt = nil
        switch options.policy {
        case .fixed, .alwaysOn:
            return sleep(until: nextDue(now: now))
        case let .adaptive(budget, minInterval, _):
            consecutiveTimeouts += 1
            if consecutiveTimeouts == 1 {
                // The sky went while moving, somewhere in the interval just ended: the track drifts
                // from the last fix once the thing is a budget away, so charge the interval but that.
                skyLostAt = poweredAt
                if let last = lastFixAt, !motion.isStill {
                    badTime += max(0, (poweredAt - last).seconds - budget / max(motion.speed, 0.1))
                }
            }
            let minimumWait = max(minInterval, options.noSkyMinimumWait)
            let missing = now - (lastFixAt ?? startedAt ?? now)
            let wait = min(max(minimumWait, missing * options.noSkyGrowth), max(options.maxBackoff, minimumWait))
            return sleep(until: now + wait)
        }
    }

    private mutating func sleep(until next: Duration) -> [FixSchedulerAction] {
        state = .off(until: next)
        sessionFixAt = nil
        return [.powerOff, .wake(at: next)]
    }

    private func nextDue(now: Duration) -> Duration {
        switch options.policy {
        case .alwaysOn:
            return now
        case let .fixed(interval):
            guard interval > .zero else { return now }
            var next = due + interval
            while next <= now { next += interval }
            return next
        case .adaptive:
            return now + interval(now: now)
        }
    }

    /// The adaptive interval from the motion estimate (see the type's documentation).
    public func interval(now: Duration) -> Duration {
        guard case let .adaptive(budget, minInterval, maxInterval) = options.policy else {
            if case let .fixed(interval) = options.policy { return interval }
            return .zero
        }
        var seconds: Double
        if motion.isStill {
            seconds = options.stillGrowth * motion.stillFor(at: now).seconds
            if options.stillLegs > 0 {
                // A departure costs about the interval once the thing is off at its usual speed.
                seconds = max(seconds, options.stillLegs * budget / max(typicalSpeed ?? options.assumedSpeed, 0.5))
            }
            seconds = max(seconds, options.stillMinimum.seconds)
        } else {
            // Just set off (or no history): assume it may still be speeding up.
            let departing = motion.previous.map { $0.speed < motion.stillSpeed } ?? true
            let floor = departing ? options.departureAcceleration : options.minAcceleration
            let a = max(motion.acceleration, floor)
            seconds = (8 * budget * options.moveBudgetShare / a).squareRoot()
            let v = motion.speed
            if v > 0 {
                seconds = min(seconds, options.stopRisk * budget / v)
                // Corners: a turn θ inside a leg L puts the chord up to L/2 · sin(θ/2) off the path.
                if motion.sharpness > 0 { seconds = min(seconds, 2 * budget * options.moveBudgetShare / (motion.sharpness * v)) }
            }
        }
        seconds = min(seconds, badTimeCap(now: now))
        let clamped = min(max(seconds, minInterval.seconds), maxInterval.seconds)
        return .seconds(clamped)
    }

    private func accuracy(of fix: Fix) -> Double {
        fix.accuracy ?? fix.hdop.map { $0 * 4 } ?? 0
    }

    /// Adaptive: accurate enough by its own estimate, and past the filter's warm-up (the same
    /// `WarmUpRule`, so the scheduler never delivers a fix the filter would skip as warming up).
    private func isGoodEnough(_ fix: Fix, now: Duration) -> Bool {
        if case .fixed = options.policy { return true }
        let age = sessionFixAt.map { now - $0 }
        return accuracy(of: fix) <= options.accuracyTarget
            && options.warmUp.rejection(of: fix, context: FilterContext(sessionAge: age)) == nil
    }
}
