import Foundation

/// The default filter: asks its rules in order (each a small type in `FilterRules.swift`) and thins
/// what passes (`TrackThinning`). A fix is rejected when it is invalid or inaccurate (`ValidityRule`),
/// one of the first of a power session and not yet accurate (`WarmUpRule`), a duplicate
/// (`DuplicateRule`), dated where the clocks say it cannot be (`TimeSanityRule`), or out of sequence
/// or out of reach of the last accepted fix (`JumpRule`). A rejected fix never becomes the reference
/// for later ones, except that `reanchorAfter` mutually consistent fixes rejected only against the
/// reference replace it (`ReanchorRule`).
///
/// Pure: the clocks come in the `FilterContext`, never from `Date()`.
public struct StandardLocationFilter: LocationFilter {
    public struct Options: Sendable, Hashable {
        /// Fixes whose accuracy estimate is worse than this are rejected, metres.
        public var maxAccuracy: Double
        /// Fastest plausible speed between two accepted fixes, m/s (the default allows a car on a motorway).
        public var maxSpeed: Double
        /// Jumps shorter than this are never called implausible (covers fix noise), metres.
        public var jumpTolerance: Double
        /// A fix may be dated this far ahead of what the clocks expect, seconds (`TimeSanityRule`).
        public var maxTimeAhead: Double
        /// …and this far behind (a fix delivered late, at the end of an acquisition), seconds.
        public var maxTimeBehind: Double
        /// Mutually consistent fixes far from the reference that replace it (0: never).
        public var reanchorAfter: Int
        /// The warm-up after a power session's first fix (`WarmUpRule`; zero: off).
        public var warmUp: Duration
        /// How fixes that pass are thinned (nil: every one is stored).
        public var thinning: TrackThinning.Options?

        /// The defaults are what the daemon ships with (an empty `[filter]` table): these rules, a 3 s
        /// warm-up, and thinning by the error budget (30 m, the scheduler's default budget). A caller
        /// that wants a rule off says so (`warmUp: .zero`, `thinning: nil`).
        public init(
            maxAccuracy: Double = 50, maxSpeed: Double = 70, jumpTolerance: Double = 100,
            maxTimeAhead: Double = 30, maxTimeBehind: Double = 300, reanchorAfter: Int = 3,
            warmUp: Duration = .seconds(3), thinning: TrackThinning.Options? = TrackThinning.Options()
        ) {
            self.maxAccuracy = maxAccuracy
            self.maxSpeed = maxSpeed
            self.jumpTolerance = jumpTolerance
            self.maxTimeAhead = maxTimeAhead
            self.maxTimeBehind = maxTimeBehind
            self.reanchorAfter = reanchorAfter
            self.warmUp = warmUp
            self.thinning = thinning
        }

        /// The jump rule these options set (the filter's, and the simulated board's audit of it).
        public var jumpRule: JumpRule { JumpRule(maxSpeed: maxSpeed, tolerance: jumpTolerance) }
    }

    public let options: Options
    /// The last accepted fix and when it arrived: what later fixes are judged against.
    public private(set) var reference: FilterReference?
    public var lastAccepted: Fix? { reference?.fix }
    private let validity: ValidityRule
    private let warmUp: WarmUpRule
    private let time: TimeSanityRule
    private let jump: JumpRule
    private var duplicates = DuplicateRule()
    private var reanchor: ReanchorRule
    private var thinning: TrackThinning?

    public init(options: Options = Options(), lastAccepted: Fix? = nil) {
        self.options = options
        reference = lastAccepted.map { FilterReference(fix: $0, arrivedAt: nil) }
        validity = ValidityRule(maxAccuracy: options.maxAccuracy)
        warmUp = WarmUpRule(period: options.warmUp)
        time = TimeSanityRule(maxAhead: options.maxTimeAhead, maxBehind: options.maxTimeBehind)
        jump = options.jumpRule
        reanchor = ReanchorRule(count: options.reanchorAfter)
        thinning = options.thinning.map(TrackThinning.init(options:))
    }

    public mutating func evaluate(_ fix: Fix, context: FilterContext) -> FilterVerdict {
        let stillAt = StillAnchor(reference?.fix, stillSpeed: warmUp.stillSpeed)
        if let reason = validity.rejection(of: fix) ?? warmUp.rejection(of: fix, context: context, stillAt: stillAt) {
            return FilterVerdict(decision: .reject(reason))
        }
        defer { duplicates.saw(fix) }
        if let reason = duplicates.rejection(of: fix, reference: reference) {
            return FilterVerdict(decision: .reject(reason))
        }
        var reanchoredAfter: Int?
        if let reason = againstReference(fix, context: context) {
            let relative = !(reason.kind == "implausibleTime" && time.isAbsolute(context: context))
            guard relative, let n = reanchor.rejected(fix, arrivedAt: context.now, jump: jump, time: time) else {
                return FilterVerdict(decision: .reject(reason))
            }
            reanchoredAfter = n
        } else {
            reanchor.accepted()
        }
        reference = FilterReference(fix: fix, arrivedAt: context.now)
        guard var thinning else {
            return FilterVerdict(decision: .accept(fix), store: [fix], reanchoredAfter: reanchoredAfter)
        }
        let step = thinning.add(fix)
        self.thinning = thinning
        return FilterVerdict(decision: .accept(fix), store: step.store, thinned: step.thinned, reanchoredAfter: reanchoredAfter)
    }

    public mutating func flush() -> [Fix] {
        thinning?.flush() ?? []
    }

    /// The rules that compare the fix with the reference (and the clocks).
    private func againstReference(_ fix: Fix, context: FilterContext) -> RejectionReason? {
        if let reason = time.rejection(of: fix, context: context, reference: reference) { return reason }
        guard let last = reference?.fix else { return nil }
        return jump.rejection(of: fix, after: last)
    }
}

extension LocationFilter {
    /// Evaluates with no context (no clocks, no power session): the rules that need none.
    public mutating func evaluate(_ fix: Fix) -> FilterVerdict {
        evaluate(fix, context: FilterContext())
    }
}
