import Foundation

/// Tells a fix measured after the receiver's power-on from one left over from before it (an epoch
/// still open when the receiver was switched off, completed by the first sentence after it was
/// switched on again): a leftover must never satisfy the scheduler.
///
/// A fix is fresh when its receiver time is not before the power-on, minus `tolerance`. The power-on
/// is placed on the receiver's time scale by the receiver clock learnt from the latest fresh fix (its
/// UTC minus the monotonic time it arrived at: slightly early, by the fix's own delivery delay, which
/// errs towards fresh); before any fix, by the system clock when the caller knows it is synchronised.
/// A fix judged stale still teaches the clock, so a receiver whose clock jumped back costs one cycle.
public struct FixFreshness: Sendable, Hashable {
    /// Slack for clocks: a leftover is older than the power-on by the whole time the receiver was off.
    public static let defaultTolerance = 0.5

    public let tolerance: TimeInterval
    /// Receiver UTC minus monotonic seconds, from the latest fix.
    private var offset: TimeInterval?
    /// The power-on on the receiver's time scale; nil when unknown (no fix yet, no synchronised clock).
    public private(set) var poweredOnAt: Date?
    public private(set) var staleFixes = 0

    public init(tolerance: TimeInterval = FixFreshness.defaultTolerance) {
        self.tolerance = tolerance
    }

    /// The receiver was powered on at `now` (monotonic); `systemTime` is the synchronised system clock
    /// then, if it is.
    public mutating func poweredOn(at now: Duration, systemTime: Date?) {
        poweredOnAt = offset.map { Date(timeIntervalSince1970: now.seconds + $0) } ?? systemTime
    }

    /// Judges a usable fix arriving at `now`: true when it was measured after the last power-on.
    public mutating func isFresh(_ fix: Fix, arrivedAt now: Duration) -> Bool {
        defer { offset = fix.time.timeIntervalSince1970 - now.seconds }
        guard let poweredOnAt, fix.time.timeIntervalSince(poweredOnAt) < -tolerance else { return true }
        staleFixes += 1
        return false
    }
}
