import Foundation

// The rules `StandardLocationFilter` asks, one small type each. Each answers for one fix, given what
// the filter remembers (the reference: the last accepted fix and when it arrived) and the context.

/// The last accepted fix, and the monotonic time it reached the filter (nil: unknown).
public struct FilterReference: Sendable, Hashable {
    public var fix: Fix
    public var arrivedAt: Duration?

    public init(fix: Fix, arrivedAt: Duration?) {
        self.fix = fix
        self.arrivedAt = arrivedAt
    }
}

/// A fix must describe a real position: a usable quality, a coordinate in range, a date the system
/// clock did not contradict (`Fix.timeUntrusted`), an accuracy estimate within the limit.
public struct ValidityRule: Sendable, Hashable {
    /// Fixes whose accuracy estimate is worse than this are rejected, metres.
    public var maxAccuracy: Double

    public init(maxAccuracy: Double) { self.maxAccuracy = maxAccuracy }

    public func rejection(of fix: Fix) -> RejectionReason? {
        guard fix.quality.isUsable else { return .noFix }
        guard fix.coordinate.isValid else { return .invalidCoordinate }
        guard !fix.timeUntrusted else { return .untrustedTime }
        if let accuracy = fix.accuracy, accuracy > maxAccuracy {
            return .poorAccuracy(metres: accuracy, limit: maxAccuracy)
        }
        return nil
    }
}

/// A fix's time must be where the clocks say it can be. With a synchronised system clock, the fix may
/// be at most `maxAhead` in its future (GPS time runs 18 s ahead of UTC, IERS Bulletin C since 2017,
/// and a receiver that has not yet decoded the UTC offset reports GPS time; the rest is margin) and at
/// most `maxBehind` in its past (a fix delivered at the end of an acquisition, the best one seen).
/// Without one, the same limits apply around the last accepted fix's time advanced by the monotonic
/// clock (crystal drift allowed: `driftRate` of the elapsed time). A wrong week or a corrupted date
/// is rejected here and never becomes the reference that would reject every later fix.
public struct TimeSanityRule: Sendable, Hashable {
    public var maxAhead: Double
    public var maxBehind: Double
    /// Relative drift allowed between the monotonic clock and GPS time (100 ppm: twice a cheap
    /// crystal's ±50 ppm).
    public var driftRate: Double

    public init(maxAhead: Double = 30, maxBehind: Double = 300, driftRate: Double = 1e-4) {
        self.maxAhead = maxAhead
        self.maxBehind = maxBehind
        self.driftRate = driftRate
    }

    /// What the clocks expect the fix's time to be, and the slack for drift; nil when they cannot say.
    public func expectedTime(context: FilterContext, reference: FilterReference?) -> (time: Date, drift: Double, absolute: Bool)? {
        if let wall = context.synchronisedTime { return (wall, 0, true) }
        guard let reference, let then = reference.arrivedAt, let now = context.now, now >= then else { return nil }
        let elapsed = (now - then).seconds
        return (reference.fix.time.addingTimeInterval(elapsed), driftRate * elapsed, false)
    }

    public func rejection(of fix: Fix, context: FilterContext, reference: FilterReference?) -> RejectionReason? {
        guard let expected = expectedTime(context: context, reference: reference) else { return nil }
        let offset = fix.time.timeIntervalSince(expected.time)
        if offset > maxAhead + expected.drift { return .implausibleTime(seconds: offset, limit: maxAhead) }
        if offset < -(maxBehind + expected.drift) { return .implausibleTime(seconds: offset, limit: maxBehind) }
        return nil
    }

    /// Whether the rejection was by the synchronised system clock (authoritative) rather than relative
    /// to the reference (which may itself be wrong: such fixes may re-anchor the filter).
    public func isAbsolute(context: FilterContext) -> Bool { context.synchronisedTime != nil }
}

/// The first fixes of a power session are the least accurate (the receiver's navigation filter has
/// not converged, fewer satellites are used: 2–3 × the steady noise in the first 1–3 fixes, the
/// assumption `ReceiverModel` documents), and their own accuracy estimate hardly shows it (HDOP does
/// not see an unconverged filter). So a fix less than `period` after the session's first usable fix is
/// skipped, whatever it estimates, still or moving: the starts gpsd's logs let one judge were all of
/// still receivers (docs/scheduling.md), and a still fix's error stands on the map for as long as the
/// thing stays. One exception: a still fix within the noise of the still position it continues
/// (`StillAnchor`) only confirms the stop, so it passes at once. The adaptive scheduler asks this
/// same rule, with its own last fix as the anchor, before it calls a fix good enough.
public struct WarmUpRule: Sendable, Hashable {
    public var period: Duration
    /// Below this speed over ground (m/s) a fix is still (as `MotionEstimate`).
    public var stillSpeed: Double

    public init(period: Duration = .seconds(3), stillSpeed: Double = 0.5) {
        self.period = period
        self.stillSpeed = stillSpeed
    }

    /// `anchor`: where the thing was last seen still (nil: moving, or nothing known).
    public func rejection(of fix: Fix, context: FilterContext, stillAt anchor: StillAnchor?) -> RejectionReason? {
        guard period > .zero, let age = context.sessionAge, age < period else { return nil }
        if let anchor, anchor.isConfirmed(by: fix, stillSpeed: stillSpeed) { return nil }
        return .warmingUp(seconds: age.seconds, accuracy: fix.accuracyEstimate)
    }
}

/// Where a still thing was last seen, and the accuracy of that fix (metres). A still fix within both
/// fixes' noise of it, 2 · (its accuracy + the anchor's) as `MotionEstimate` ignores a displacement,
/// says the thing has not moved.
public struct StillAnchor: Sendable, Hashable {
    public var coordinate: Coordinate
    public var accuracy: Double

    public init(coordinate: Coordinate, accuracy: Double) {
        self.coordinate = coordinate
        self.accuracy = accuracy
    }

    /// `fix` as an anchor when its own speed over ground says it was still.
    public init?(_ fix: Fix?, stillSpeed: Double) {
        guard let fix, let speed = fix.speed, speed < stillSpeed else { return nil }
        self.init(coordinate: fix.coordinate, accuracy: fix.accuracyOrTypical)
    }

    /// Whether `fix` is still (its own speed over ground) and within the noise of the anchor.
    public func isConfirmed(by fix: Fix, stillSpeed: Double) -> Bool {
        guard let speed = fix.speed, speed < stillSpeed else { return false }
        return Geodesy.distance(coordinate, fix.coordinate) <= 2 * (accuracy + fix.accuracyOrTypical)
    }
}

/// The same fix twice: the same time as the last accepted fix, or the same time and position as one
/// of the last few fixes seen (a re-sent sentence, the same epoch under another talker, GP and GN).
public struct DuplicateRule: Sendable, Hashable {
    /// How many recent fixes are remembered.
    public var memory: Int
    /// Positions closer than this are the same, metres.
    public var samePosition: Double
    private var recent: [Fix] = []

    public init(memory: Int = 8, samePosition: Double = 0.5) {
        self.memory = memory
        self.samePosition = samePosition
    }

    public func rejection(of fix: Fix, reference: FilterReference?) -> RejectionReason? {
        if let last = reference?.fix, fix.time == last.time { return .duplicate }
        let seen = recent.contains { $0.time == fix.time && Geodesy.distance($0.coordinate, fix.coordinate) <= samePosition }
        return seen ? .duplicate : nil
    }

    public mutating func saw(_ fix: Fix) {
        recent.append(fix)
        if recent.count > memory { recent.removeFirst(recent.count - memory) }
    }
}

/// Fixes must follow the reference in time and be reachable from it: not farther than `tolerance`
/// plus `maxSpeed` × the time between them.
public struct JumpRule: Sendable, Hashable {
    /// Fastest plausible speed between two accepted fixes, m/s.
    public var maxSpeed: Double
    /// Jumps shorter than this are never called implausible (covers fix noise), metres.
    public var tolerance: Double

    public init(maxSpeed: Double, tolerance: Double) {
        self.maxSpeed = maxSpeed
        self.tolerance = tolerance
    }

    public func rejection(of fix: Fix, after last: Fix) -> RejectionReason? {
        if fix.time < last.time { return .outOfSequence }
        let metres = Geodesy.distance(last.coordinate, fix.coordinate)
        let seconds = fix.time.timeIntervalSince(last.time)
        if metres > tolerance + maxSpeed * seconds {
            return .implausibleJump(metresPerSecond: seconds > 0 ? metres / seconds : .infinity, limit: maxSpeed)
        }
        return nil
    }
}

/// Recovery from a reference that no longer holds (the thing was carried far: a ferry, a tow truck; or
/// the reference itself was wrong): fixes rejected only for disagreeing with the reference (out of
/// sequence, an impossible jump, a time the reference does not expect) are remembered; once `count`
/// of them in a row agree with each other (in time order, reachable from one another, their times
/// advancing with the monotonic clock), the last becomes the new reference.
public struct ReanchorRule: Sendable, Hashable {
    public var count: Int
    public private(set) var candidates: [FilterReference] = []

    public init(count: Int = 3) { self.count = count }

    /// Notes a fix rejected against the reference; returns how many agree in a row when that reaches
    /// `count` (the fix re-anchors), else nil.
    public mutating func rejected(_ fix: Fix, arrivedAt: Duration?, jump: JumpRule, time: TimeSanityRule) -> Int? {
        guard count > 0 else { return nil }
        let candidate = FilterReference(fix: fix, arrivedAt: arrivedAt)
        if let last = candidates.last, !Self.agree(last, candidate, jump: jump, time: time) { candidates = [] }
        candidates.append(candidate)
        guard candidates.count >= count else { return nil }
        let n = candidates.count
        candidates = []
        return n
    }

    /// A fix was accepted against the reference: the run of disagreeing fixes is over.
    public mutating func accepted() { candidates = [] }

    static func agree(_ a: FilterReference, _ b: FilterReference, jump: JumpRule, time: TimeSanityRule) -> Bool {
        guard b.fix.time > a.fix.time, jump.rejection(of: b.fix, after: a.fix) == nil else { return false }
        if let then = a.arrivedAt, let now = b.arrivedAt {
            let elapsed = (now - then).seconds
            let offset = b.fix.time.timeIntervalSince(a.fix.time) - elapsed
            return offset <= time.maxAhead + time.driftRate * elapsed && offset >= -(time.maxBehind + time.driftRate * elapsed)
        }
        return true
    }
}
