/// When the next fix is due: pure, from what the fixes so far say. The motion estimate, the usual
/// moving speed, the bad-time account and the ephemeris age go in; the next due time comes out (the
/// rules 2, 3, 4's waits, 5 and 7 of `FixScheduler`). The acquisition cycle tells it each fix taken
/// and each attempt that found no sky; it never powers anything.
public struct IntervalPolicy: Sendable, Hashable {
    public let policy: FixPolicy
    public let tuning: FixScheduler.Tuning
    public let energy: ReceiverEnergy
    public internal(set) var motion: MotionEstimate
    /// Adaptive: the speed the thing usually moves at (smoothed over moving fixes), m/s.
    public internal(set) var typicalSpeed: Double?
    /// Adaptive: estimated seconds so far in which the interpolated track was off by more than the budget.
    public internal(set) var badTime: Double = 0
    /// Adaptive: seconds without sky so far (from a failed attempt to the next fix); they earn no
    /// share in the bad-time account.
    public internal(set) var skylessTime: Double = 0
    /// When the receiver last decoded the ephemeris, as far as can be told (nil: never).
    public internal(set) var ephemerisTime: Duration?
    /// Attempts without sky since the last fix.
    public private(set) var missedInARow = 0
    /// When the first attempt of the current run without sky was powered (nil: the last attempt got a fix).
    private var skyLostAt: Duration?
    private var lastFixAt: Duration?
    /// A fix that showed a still thing displaced, held back for its recheck: when, and where.
    private var heldBack: HeldBack?
    private struct HeldBack: Sendable, Hashable {
        var at: Duration
        var coordinate: Coordinate
    }
    /// When this run started, and the seconds with sky earned before a restart (`Memory`).
    var startedAt: Duration?
    var earnedBefore: Double = 0

    public init(policy: FixPolicy, tuning: FixScheduler.Tuning, energy: ReceiverEnergy) {
        self.policy = policy
        self.tuning = tuning
        self.energy = energy
        motion = MotionEstimate(cornerMemory: tuning.cornerMemory)
    }

    // MARK: What happened

    /// A fix was taken at `now` (`fix`: the one delivered, nil when none is known): the motion
    /// estimate learns it and the gap it closes is charged to the bad-time account.
    mutating func fixTaken(_ fix: Fix?, now: Duration) {
        if let fix {
            let wasStill = motion.isStill
            motion.update(with: fix, at: now)
            accountBadTime(wasStill: wasStill, now: now)
        }
        lastFixAt = now
        heldBack = nil
        skyLostAt = nil
        missedInARow = 0
    }

    /// A fix at `now` showed the still thing displaced and waits for its recheck (`PlausibilityCheck`):
    /// if the recheck confirms the move, this one dates the departure.
    mutating func moveSeen(_ fix: Fix, at now: Duration) {
        heldBack = HeldBack(at: now, coordinate: fix.coordinate)
    }

    /// An attempt powered at `poweredAt` found no sky. The first of a run, while moving: the track
    /// drifts from the last fix once the thing is a budget away, so the interval but that is charged.
    mutating func noSky(poweredAt: Duration) {
        missedInARow += 1
        guard case let .adaptive(budget, _, _) = policy, missedInARow == 1 else { return }
        skyLostAt = poweredAt
        if let last = lastFixAt, !motion.isStill {
            badTime += max(0, (poweredAt - last).seconds - budget / max(motion.speed, tuning.speedFloor))
        }
    }

    /// A session that began at `poweredAt` saw its first fix at `now`, or has tracked since `first`:
    /// a slow first fix means the receiver decoded the ephemeris; so does `ephemerisRefresh` of tracking.
    mutating func sessionFix(poweredAt: Duration, first: Duration?, now: Duration) {
        guard let first else {
            let slow = max(energy.hotStartTTFF * tuning.ephemerisDecodeHotFactor, energy.warmStartTTFF * tuning.ephemerisDecodeWarmShare)
            if now - poweredAt > slow { ephemerisTime = now }
            return
        }
        if now - first >= energy.ephemerisRefresh { ephemerisTime = now }
    }

    /// Charges the gap just closed with the time its interpolation likely spent beyond the budget:
    /// a start or stop inside it (all but the time to cover 2 budgets), or a bend deeper than the
    /// interpolation's share of the budget.
    private mutating func accountBadTime(wasStill: Bool, now: Duration) {
        // A gap without sky is not the interval's doing: a shorter interval would not have shortened it.
        guard case let .adaptive(budget, _, _) = policy, let since = lastFixAt, now > since else { return }
        guard missedInARow == 0 else {
            // …nor does it count as time the track was right (p95 is over the seconds with sky).
            skylessTime += (now - (skyLostAt ?? since)).seconds
            return
        }
        let gap = (now - since).seconds
        if !motion.isStill, motion.speed >= motion.stillSpeed {
            typicalSpeed = typicalSpeed.map { $0 + tuning.speedSmoothing * (motion.speed - $0) } ?? motion.speed
        }
        let v = max(motion.speed, motion.previous?.speed ?? 0, tuning.speedFloor)
        if wasStill, !motion.isStill, let seen = heldBack, let a = motion.previous, seen.at > since {
            // A departure dated by the fix that showed it (held back for its recheck): `d` from the
            // still place at `seen.at`, so set off about d / v before. The chord from the still fix
            // to this one is off by the most then, v · (now − setOff) · (setOff − since) / gap, and
            // by less towards either end.
            let setOff = max(since.seconds, seen.at.seconds - Geodesy.distance(a.coordinate, seen.coordinate) / v)
            let peak = v * (now.seconds - setOff) * (setOff - since.seconds) / gap
            if peak > budget { badTime += gap * (1 - budget / peak) }
        } else if wasStill != motion.isStill, motion.previous != nil {
            badTime += max(0, gap - 2 * budget / v)
        } else if motion.isStill, let a = motion.previous, let b = motion.last {
            // Still at both ends yet displaced by d: a move at an unknown time inside the gap (or an
            // error that lasted) keeps the chord beyond the budget for (1 − budget/d)² of it on average.
            let d = Geodesy.distance(a.coordinate, b.coordinate)
            if d > budget { badTime += gap * (1 - budget / d) * (1 - budget / d) }
        } else if !motion.isStill {
            // Past the interpolation's share of the budget the track is off: the rest is the fixes'
            // own error, the same split the moving interval aims at (rule 2).
            let bend = motion.acceleration * gap * gap / 8
            let allowed = budget * tuning.moveBudgetShare
            if bend > allowed { badTime += gap * (1 - allowed / bend).squareRoot() }
        }
    }

    // MARK: When next

    /// The next fix after one taken at `now`, for an attempt that was due at `slot`.
    func nextDue(slot: Duration, now: Duration) -> Duration {
        switch policy {
        case .alwaysOn:
            return now
        case let .fixed(interval):
            guard interval > .zero else { return now }
            var next = slot + interval
            while next <= now { next += interval }
            return next
        case .adaptive:
            return now + interval(now: now)
        }
    }

    /// Adaptive: a next fix past the ephemeris' hot window comes forward to just inside it, so the
    /// cycle then refreshes (one refresh a window, not one a window less an interval).
    func keepingTheEphemeris(_ next: Duration, now: Duration) -> Duration {
        guard let decoded = ephemerisTime, next - decoded > energy.hotStartWindow, refreshIsWorthwhile(next - now) else { return next }
        let last = decoded + energy.hotStartWindow - tuning.refreshMargin
        return last > now ? last : next
    }

    /// Adaptive: whether tracking on from a session's first fix `first` until `ephemerisRefresh` beats
    /// the warm start a next fix at `next` would need.
    func shouldRefresh(next: Duration, sessionFirstFix first: Duration?, now: Duration) -> Bool {
        guard let first, let decoded = ephemerisTime else { return false }
        return next - decoded > energy.hotStartWindow && now - first < energy.ephemerisRefresh && refreshIsWorthwhile(next - now)
    }

    func refreshIsWorthwhile(_ interval: Duration) -> Bool {
        guard interval < energy.hotStartWindow else { return false }
        let refresh = energy.trackingCurrent * energy.ephemerisRefresh.seconds
        let warm = energy.acquisitionCurrent * energy.warmStartTTFF.seconds
        return refresh <= tuning.refreshWorth * warm
    }

    /// Whether the ephemeris is stale at `now` as far as can be told (a warm start expected).
    func ephemerisIsStale(now: Duration) -> Bool {
        ephemerisTime.map { now - $0 > energy.hotStartWindow } ?? true
    }

    /// Adaptive: how long to wait after an attempt without sky ended at `now`.
    func waitAfterNoSky(now: Duration) -> Duration {
        guard case let .adaptive(_, minInterval, _) = policy else { return .zero }
        let minimumWait = max(minInterval, tuning.noSkyMinimumWait)
        let missing = now - (lastFixAt ?? startedAt ?? now)
        return min(max(minimumWait, missing * tuning.noSkyGrowth), max(tuning.maxBackoff, minimumWait))
    }

    /// The adaptive interval from the motion estimate (see `FixScheduler`'s rules 2, 3 and 7).
    public func interval(now: Duration) -> Duration {
        guard case let .adaptive(budget, minInterval, maxInterval) = policy else {
            if case let .fixed(interval) = policy { return interval }
            return .zero
        }
        var seconds: Double
        if motion.isStill {
            seconds = tuning.stillGrowth * motion.stillFor(at: now).seconds
            if tuning.stillLegs > 0 {
                // A departure costs about the interval once the thing is off at its usual speed.
                seconds = max(seconds, tuning.stillLegs * budget / max(typicalSpeed ?? tuning.assumedSpeed, tuning.slowestUsualSpeed))
            }
            seconds = max(seconds, tuning.stillMinimum.seconds)
        } else {
            // Just set off (or no history): assume it may still be speeding up.
            let departing = motion.previous.map { $0.speed < motion.stillSpeed } ?? true
            let floor = departing ? tuning.departureAcceleration : tuning.minAcceleration
            let a = max(motion.acceleration, floor)
            seconds = (8 * budget * tuning.moveBudgetShare / a).squareRoot()
            let v = motion.speed
            if v > 0 {
                seconds = min(seconds, tuning.stopRisk * budget / v)
                // Corners: a turn θ inside a leg L puts the chord up to L/2 · sin(θ/2) off the path.
                if motion.sharpness > 0 { seconds = min(seconds, 2 * budget * tuning.moveBudgetShare / (motion.sharpness * v)) }
            }
        }
        seconds = min(seconds, badTimeCap(now: now))
        let clamped = min(max(seconds, minInterval.seconds), maxInterval.seconds)
        return .seconds(clamped)
    }

    // MARK: The bad-time account

    /// Adaptive: the account (seconds the track was likely off by more than the budget) and what the
    /// policy allows it (`badTimeShare` of the time with sky, plus `badTimeCredit`).
    func offBudget(now: Duration) -> (seconds: Double, allowed: Double)? {
        guard case .adaptive = policy, startedAt != nil else { return nil }
        return (badTime, tuning.badTimeShare * (timeWithSky(now: now) + tuning.badTimeCredit.seconds))
    }

    /// Seconds with sky so far, this run and the runs before a restart: what earns the account its share.
    func timeWithSky(now: Duration) -> Double {
        earnedBefore + (now - (startedAt ?? now)).seconds - skylessTime
    }

    /// The longest interval that keeps the account within `badTimeShare` should it go wrong.
    private func badTimeCap(now: Duration) -> Double {
        let share = tuning.badTimeShare
        guard share > 0, share < 1 else { return .infinity }
        let elapsed = timeWithSky(now: now) + tuning.badTimeCredit.seconds
        return max(0, share * elapsed - badTime) / (1 - share)
    }

    // MARK: Memory

    /// Resumes from `memory`, saved `downtime` ago, at `now` (see `FixScheduler.remember`).
    mutating func resume(_ memory: FixScheduler.Memory, downtime: Duration, now: Duration) {
        earnedBefore = max(0, memory.elapsedSeconds)
        badTime = max(0, memory.badTimeSeconds)
        typicalSpeed = memory.typicalSpeed
        ephemerisTime = memory.ephemerisAgeSeconds.map { now - .seconds($0) - downtime }
        if var last = memory.lastFix, let age = memory.lastFixAgeSeconds {
            last.time = now - .seconds(age) - downtime
            motion.restore(last: last, stillSince: memory.stillSeconds.map { now - .seconds($0) - downtime })
        }
    }
}
