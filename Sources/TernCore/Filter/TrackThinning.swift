import Foundation

/// Drops fixes the stored track does not need, like the peers do (Traccar Client's distance, angle and
/// interval; Teltonika's Min Distance 100 m, Min Angle 10°, Min Period, a record per period while
/// stopped), with Tern's twist: the first and last fix of every stop and every turn are kept, so the
/// track through the kept fixes stays close to the full one.
///
/// Pure. Fixes come in time order (the filter's accepted ones). The first is kept. Each later one is
/// *held* until the next shows what it was: the end of a stop or a turn (kept), or a point the kept
/// track does not need (thinned). A fix is a boundary when it starts or ends a stop (its speed crosses
/// `stillSpeed`) or turns by `turnAngle` or more from the fix before (both moving): the held fix before
/// it (the last of the old motion) and the fix itself (the first of the new) are kept. Otherwise the rule:
///
/// - `errorBudget(tolerance)` (default): `tolerance` is the error budget of the *stored* track (what
///   the server shows), and each dropped fix's own error already spends part of it. The held fix is
///   thinned when the straight track from the last kept fix to the new one, interpolated in time as
///   every consumer of the track does, passes within `share(of: tolerance, for:)` of every fix dropped
///   since, the budget less that fix's 95 % error radius; else it is kept. The thinned track is then
///   within that share of the full one at every moment (the difference of two tracks linear in time
///   between the same instants is linear, so its largest value is at a fix), and within the budget of
///   the truth wherever the fix was within its 95 % radius. Giving thinning the whole budget put the
///   stored track over it in 30–44 % of the simulated runs (issue 34). While still and within the
///   noise of the last kept fix, a dropped fix differs from the kept ones only by its noise around
///   the same spot: the whole budget is thinning's.
/// - `minimums(distance, angle, period)`: a fix is kept once it is `distance` from the last kept fix,
///   has turned `angle` from its course, or `period` has passed (the peers' rule).
///
/// Either way a held fix is kept once it is `heartbeat` (still) or `maxHeld` (moving) after the last
/// kept fix: a parked tracker still reports, and the server's view of a moving one lags by at most
/// `maxHeld`.
public struct TrackThinning: Sendable, Hashable {
    public enum Rule: Sendable, Hashable {
        case errorBudget(tolerance: Double)
        case minimums(distance: Double, angle: Double, period: Duration)
    }

    public struct Options: Sendable, Hashable {
        public var rule: Rule
        /// Still: a fix is kept at least this often (Teltonika's Min Period on stop: 3600 s).
        public var heartbeat: Duration
        /// Moving: a fix is held (not yet stored) at most this long after the last kept one
        /// (Teltonika's Min Period while moving, Traccar Client's default interval: 300 s).
        public var maxHeld: Duration
        /// Below this speed over ground a fix is still, m/s (as `MotionEstimate`).
        public var stillSpeed: Double
        /// A course change of at least this between two moving fixes is a turn, degrees (the peers'
        /// Min Angle: 10°).
        public var turnAngle: Double

        public init(
            rule: Rule = .errorBudget(tolerance: FixPolicy.shippedErrorBudget), heartbeat: Duration = .seconds(3600), maxHeld: Duration = .seconds(300),
            stillSpeed: Double = 0.5, turnAngle: Double = 10
        ) {
            self.rule = rule
            self.heartbeat = heartbeat
            self.maxHeld = maxHeld
            self.stillSpeed = stillSpeed
            self.turnAngle = turnAngle
        }
    }

    /// What one fix did: fixes to store now (oldest first) and fixes thinned.
    public struct Step: Sendable, Hashable {
        public var store: [Fix] = []
        public var thinned: [ThinningReason] = []
    }

    public let options: Options
    /// The last fix kept.
    public private(set) var anchor: Fix?
    /// Fixes since the anchor not kept; the last is the held one, the others are thinned already.
    private var skipped: [Fix] = []
    /// The most skipped fixes remembered for the budget check (a bound on memory and work).
    static let maxSkipped = 512

    public init(options: Options = Options()) { self.options = options }

    public var held: Fix? { skipped.last }

    public mutating func add(_ fix: Fix) -> Step {
        var step = Step()
        guard let anchor else {
            keep(fix, into: &step)
            return step
        }
        let previous = held ?? anchor
        if isBoundary(from: previous, to: fix) {
            if let held { keep(held, into: &step) }
            keep(fix, into: &step)
            return step
        }
        switch options.rule {
        case let .errorBudget(tolerance):
            if let held, !withinTolerance(tolerance, atOneSpot: isAtOneSpot(fix, after: previous, anchor: anchor), from: anchor, to: fix) {
                keep(held, into: &step)
            } else if held != nil {
                step.thinned.append(.withinBudget(tolerance: tolerance))
            }
        case let .minimums(distance, angle, period):
            if held != nil { step.thinned.append(.belowMinimums) }
            let turned = Self.courseChange(anchor, fix).map { $0 >= angle } ?? false
            if Geodesy.distance(anchor.coordinate, fix.coordinate) >= distance || turned
                || fix.time.timeIntervalSince(anchor.time) >= period.seconds {
                skipped = []
                keep(fix, into: &step)
                return step
            }
        }
        if skipped.count >= Self.maxSkipped { skipped.removeFirst() }
        skipped.append(fix)
        let limit = isStill(fix, after: self.anchor ?? fix) ? options.heartbeat : options.maxHeld
        if let kept = self.anchor, fix.time.timeIntervalSince(kept.time) >= limit.seconds {
            skipped = []
            keep(fix, into: &step)
        }
        return step
    }

    /// The held fix, to store at shutdown (the track's last point).
    public mutating func flush() -> [Fix] {
        guard let held else { return [] }
        anchor = held
        skipped = []
        return [held]
    }

    private mutating func keep(_ fix: Fix, into step: inout Step) {
        step.store.append(fix)
        anchor = fix
        skipped = []
    }

    /// Starts or ends a stop, or turns.
    private func isBoundary(from a: Fix, to b: Fix) -> Bool {
        let stillA = isStill(a, after: nil), stillB = isStill(b, after: a)
        if stillA != stillB { return true }
        guard !stillA, let change = Self.courseChange(a, b) else { return false }
        return change >= options.turnAngle
    }

    /// Still by the receiver's speed over ground; without one, by the displacement from `previous`
    /// beyond both fixes' noise.
    private func isStill(_ fix: Fix, after previous: Fix?) -> Bool {
        if let speed = fix.speed { return speed < options.stillSpeed }
        guard let previous, fix.time > previous.time else { return true }
        let noise = fix.errorRadius95 + previous.errorRadius95
        let metres = Geodesy.distance(previous.coordinate, fix.coordinate) - noise
        return metres / fix.time.timeIntervalSince(previous.time) < options.stillSpeed
    }

    /// Still, and within both fixes' 95 % radii of `anchor`: no displacement shows. A speed under
    /// `stillSpeed` is not enough: a drifting boat at 0.3 m/s is 18 m away a minute later.
    private func isAtOneSpot(_ fix: Fix, after previous: Fix, anchor: Fix) -> Bool {
        isStill(fix, after: previous) && Geodesy.distance(anchor.coordinate, fix.coordinate) <= fix.errorRadius95 + anchor.errorRadius95
    }

    /// Course change between two fixes, degrees 0…180, when both report a course while moving.
    static func courseChange(_ a: Fix, _ b: Fix) -> Double? {
        guard let ca = a.course, let cb = b.course, (a.speed ?? 0) > 0, (b.speed ?? 0) > 0 else { return nil }
        let change = abs(ca - cb).truncatingRemainder(dividingBy: 360)
        return change > 180 ? 360 - change : change
    }

    /// Whether every fix skipped since `anchor`, and the held one, lies within its share of `tolerance`
    /// of the straight track from `anchor` to `fix`, interpolated in time. At one spot
    /// (`isAtOneSpot`) a skipped fix differs from the kept track by its own noise around
    /// that spot, which the stored track does not carry: the whole budget is thinning's.
    private func withinTolerance(_ tolerance: Double, atOneSpot: Bool, from anchor: Fix, to fix: Fix) -> Bool {
        let span = fix.time.timeIntervalSince(anchor.time)
        guard span > 0 else { return false }
        return skipped.allSatisfy { point in
            let fraction = min(1, max(0, point.time.timeIntervalSince(anchor.time) / span))
            let there = Geodesy.interpolate(anchor.coordinate, fix.coordinate, fraction: fraction)
            return Geodesy.distance(there, point.coordinate) <= (atOneSpot ? tolerance : Self.share(of: tolerance, for: point))
        }
    }

    /// How far thinning may move the stored track from `fix`: the budget less the fix's own 95 %
    /// error radius (`Fix.errorRadius95`); nothing when that radius fills the budget (the fix is kept).
    public static func share(of budget: Double, for fix: Fix) -> Double {
        max(0, budget - fix.errorRadius95)
    }
}
