import Foundation

/// Whether a fix agrees with the motion seen so far, by physics: a thing that was still and says it is
/// still (speed over ground, from the Doppler shift, which multipath hardly bends) has not moved
/// beyond the fixes' noise; a moving one is near where its speed and course carried it, within what
/// its observed acceleration allows. A fix that does not is *suspect*: the adaptive scheduler does not
/// take it at once but confirms it with the next epoch's fix (a second later, about 1 % of a still
/// interval's energy): a real move repeats, an outlier (a false lock, a reflected signal: hundreds of
/// metres, one epoch) does not. Without it one outlier followed by a long still interval puts the
/// track off by hundreds of metres for up to twice that interval.
public struct PlausibilityCheck: Sendable, Hashable {
    /// Added to the fixes' own noise (2 × the two accuracy estimates) for what the estimates do not
    /// show (multipath: several times the reported error), metres.
    public var margin: Double
    /// The least acceleration assumed when predicting a moving thing, m/s².
    public var minAcceleration: Double
    /// How long after a `movedWhileStill` fix the confirming fix is taken: long enough for the errors
    /// that last seconds (multipath off a nearby wall or roof, the slowly varying part of the error:
    /// tens of seconds to minutes) to have changed, so that a second fix is evidence, not a copy.
    public var stillRecheck: Duration

    /// Why a fix contradicts the motion seen.
    public enum Suspicion: Sendable, Hashable {
        /// Still before and still now (speed over ground), yet displaced beyond the noise: a real
        /// move in between, or an error that lasts (multipath), which the next epoch would repeat.
        case movedWhileStill
        /// Far from where the speed and course carried it: a real manoeuvre, or a one-epoch outlier.
        case offCourse
    }

    public init(margin: Double = 20, minAcceleration: Double = 0.1, stillRecheck: Duration = .seconds(60)) {
        self.margin = margin
        self.minAcceleration = minAcceleration
        self.stillRecheck = stillRecheck
    }

    /// How `fix` (reaching the scheduler at `now`) contradicts the motion estimate's last fix, if it does.
    public func suspicion(of fix: Fix, at now: Duration, motion: MotionEstimate) -> Suspicion? {
        guard let last = motion.last, now > last.time else { return nil }
        let seconds = (now - last.time).seconds
        let noise = 2 * (last.accuracy + Self.accuracy(of: fix)) + margin
        let speed = fix.speed ?? 0
        if last.speed < motion.stillSpeed, speed < motion.stillSpeed {
            return Geodesy.distance(last.coordinate, fix.coordinate) > noise ? .movedWhileStill : nil
        }
        // Moving: where the mean speed along the last course would have carried it.
        let bearing = last.course ?? fix.course ?? Geodesy.bearing(from: last.coordinate, to: fix.coordinate)
        let predicted = Geodesy.destination(from: last.coordinate, distance: (last.speed + speed) / 2 * seconds, bearing: bearing)
        let a = max(2 * motion.acceleration, minAcceleration)
        return Geodesy.distance(predicted, fix.coordinate) > noise + a * seconds * seconds / 2 ? .offCourse : nil
    }

    /// Whether `later` confirms `earlier` (a second or so after it): within the noise plus its travel.
    public func agree(_ earlier: Fix, _ later: Fix) -> Bool {
        let seconds = max(0, later.time.timeIntervalSince(earlier.time))
        let travel = max(earlier.speed ?? 0, later.speed ?? 0) * seconds
        let noise = 2 * (Self.accuracy(of: earlier) + Self.accuracy(of: later)) + margin
        return Geodesy.distance(earlier.coordinate, later.coordinate) <= noise + travel
    }

    static func accuracy(of fix: Fix) -> Double { fix.accuracyOrTypical }
}
