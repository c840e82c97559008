import Foundation

/// What the recent accepted fixes say about how the tracked thing moves: still or moving (the
/// receiver's speed over ground when it reports one, else the displacement beyond the noise), speed,
/// and the acceleration (along track and across it, from turns) that bends the track away from the
/// straight line the interpolation draws between fixes. Pure; times are the scheduler's `Duration`s.
public struct MotionEstimate: Sendable, Hashable {
    /// One accepted fix, reduced to what the estimate uses.
    public struct Sample: Sendable, Hashable, Codable {
        public var time: Duration
        public var coordinate: Coordinate
        /// Speed over ground, m/s (the receiver's, else from the displacement).
        public var speed: Double
        /// Course over ground, degrees true, when the receiver gave one while moving.
        public var course: Double?
        public var accuracy: Double

        public init(time: Duration, coordinate: Coordinate, speed: Double, course: Double?, accuracy: Double) {
            self.time = time
            self.coordinate = coordinate
            self.speed = speed
            self.course = course
            self.accuracy = accuracy
        }
    }

    /// Below this speed over ground (m/s) a fix says "still" (receiver SOG noise at rest is ~0.1 m/s).
    public var stillSpeed: Double

    public private(set) var last: Sample?
    public private(set) var previous: Sample?
    /// When the thing was first seen still in the current still spell; nil while moving.
    public private(set) var stillSince: Duration?
    /// Acceleration seen between the last two fixes, m/s²: along track and lateral (speed × turn rate).
    public private(set) var acceleration: Double = 0

    /// How sharply the thing has turned lately: sin(θ/2) of the largest course change θ seen
    /// between two moving fixes, fading with the distance travelled since (`cornerMemory`). A corner
    /// of θ in a leg of length L puts the chord up to L/2 · sin(θ/2) off the path: this scales legs.
    public private(set) var sharpness: Double = 0
    /// Metres of travel over which a sharp turn seen fades from `sharpness` (by a factor e).
    public var cornerMemory: Double

    public init(stillSpeed: Double = 0.5, cornerMemory: Double = 1000) {
        self.stillSpeed = stillSpeed
        self.cornerMemory = cornerMemory
    }

    public var isStill: Bool { stillSince != nil }
    public var speed: Double { last?.speed ?? 0 }

    /// How long the thing has been still at `now` (zero while moving).
    public func stillFor(at now: Duration) -> Duration {
        guard let since = stillSince else { return .zero }
        return now - since
    }

    /// Starts from a fix remembered across a restart (`FixScheduler.Memory`): the next fix is
    /// compared with it; no acceleration or turn is carried over.
    public mutating func restore(last sample: Sample, stillSince: Duration?) {
        last = sample
        previous = nil
        self.stillSince = stillSince
        acceleration = 0
        sharpness = 0
    }

    public mutating func update(with fix: Fix, at now: Duration) {
        let accuracy = fix.accuracyOrTypical
        // The gap since the last fix: its length in seconds and the straight chord across it, metres.
        let gap = last.flatMap { last in
            now > last.time ? (last: last, seconds: (now - last.time).seconds, chord: Geodesy.distance(last.coordinate, fix.coordinate)) : nil
        }
        // Displacement counts only beyond the fixes' own noise.
        let displacementSpeed = gap.map { max(0, $0.chord - 2 * (accuracy + $0.last.accuracy)) / $0.seconds }
        // The receiver's speed over ground (Doppler) says whether the thing moves now; a displacement
        // only where it says nothing: position errors that last (multipath) displace a still fix tens
        // of metres, which over a short gap reads as a speed the receiver never measured.
        let sog = fix.speed ?? displacementSpeed ?? 0
        let moving = sog >= stillSpeed
        let course = moving ? fix.course : nil
        let sample = Sample(time: now, coordinate: fix.coordinate, speed: sog, course: course, accuracy: accuracy)

        if let (last, seconds, chord) = gap {
            let along = abs(sog - last.speed) / seconds
            // The course change between the two fixes, degrees (0…180), when both had a course.
            let turn = last.course.flatMap { a in course.map { b in
                let change = abs(a - b).truncatingRemainder(dividingBy: 360)
                return change > 180 ? 360 - change : change
            } }
            let lateral = turn.map { max(sog, last.speed) * ($0 * .pi / 180) / seconds } ?? 0
            let fade = cornerMemory > 0 ? exp(-chord / cornerMemory) : 0
            sharpness = max(turn.map { sin($0 * .pi / 360) } ?? 0, sharpness * fade)
            // A chord much longer or shorter than the speeds at its ends also betrays a manoeuvre.
            let expected = (sog + last.speed) / 2 * seconds
            let mismatch = max(0, abs(chord - expected) - 2 * (accuracy + last.accuracy))
            let fromChord = 8 * mismatch / (seconds * seconds)
            acceleration = max((along * along + lateral * lateral).squareRoot(), fromChord)
        } else {
            acceleration = 0
        }
        if moving {
            stillSince = nil
        } else if stillSince == nil {
            stillSince = now
        }
        previous = last
        last = sample
    }
}
