import Foundation

/// What the recent accepted fixes say about how the tracked thing moves: still or moving, speed,
/// and the acceleration (along track and across it, from turns) that bends the track away from the
/// straight line the interpolation draws between fixes. Pure; times are the scheduler's `Duration`s.
public struct MotionEstimate: Sendable, Hashable {
    /// One accepted fix, reduced to what the estimate uses.
    public struct Sample: Sendable, Hashable {
        public var time: Duration
        public var coordinate: Coordinate
        /// Speed over ground, m/s (the receiver's, else from the displacement).
        public var speed: Double
        /// Course over ground, degrees true, when the receiver gave one while moving.
        public var course: Double?
        public var accuracy: Double
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

    public mutating func update(with fix: Fix, at now: Duration) {
        let accuracy = fix.accuracy ?? fix.hdop.map { $0 * 4 } ?? 5
        var speed = fix.speed
        var displacementSpeed: Double?
        if let last, now > last.time {
            let metres = Geodesy.distance(last.coordinate, fix.coordinate)
            let seconds = (now - last.time).seconds
            // Displacement counts only beyond the fixes' own noise.
            let beyondNoise = max(0, metres - 2 * (accuracy + last.accuracy))
            displacementSpeed = beyondNoise / seconds
        }
        if speed == nil { speed = displacementSpeed ?? 0 }
        let sog = speed ?? 0
        let moving = sog >= stillSpeed || (displacementSpeed ?? 0) >= stillSpeed
        let course = sog >= stillSpeed ? fix.course : nil
        let sample = Sample(time: now, coordinate: fix.coordinate, speed: sog, course: course, accuracy: accuracy)

        if let last, now > last.time {
            let seconds = (now - last.time).seconds
            let along = abs(sog - last.speed) / seconds
            var lateral = 0.0
            if let a = last.course, let b = course {
                var turn = abs(a - b).truncatingRemainder(dividingBy: 360)
                if turn > 180 { turn = 360 - turn }
                lateral = max(sog, last.speed) * (turn * .pi / 180) / seconds
            }
            let travelled = Geodesy.distance(last.coordinate, fix.coordinate)
            let fade = cornerMemory > 0 ? exp(-travelled / cornerMemory) : 0
            var corner = 0.0
            if let a = last.course, let b = course {
                var turn = abs(a - b).truncatingRemainder(dividingBy: 360)
                if turn > 180 { turn = 360 - turn }
                corner = sin(turn * .pi / 360)
            }
            sharpness = max(corner, sharpness * fade)
            // A chord much longer or shorter than the speeds at its ends also betrays a manoeuvre.
            let chord = Geodesy.distance(last.coordinate, fix.coordinate)
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
