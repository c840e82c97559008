import TernCore

/// Where the simulated receiver truly is, `seconds` after the simulation's start.
public protocol Trajectory: Sendable {
    func state(at seconds: Double) -> Route.State
}

/// A closed route driven at a constant speed with regular stops: where the simulated receiver is.
public struct Route: Trajectory, Hashable {
    public struct State: Sendable, Hashable {
        public var coordinate: Coordinate
        /// Metres per second.
        public var speed: Double
        /// Degrees true.
        public var course: Double
    }

    public var waypoints: [Coordinate]
    /// Travel speed between stops, m/s.
    public var speed: Double
    /// Drive this long, then stand still for `stopDuration` (seconds).
    public var driveDuration: Double
    public var stopDuration: Double

    public init(waypoints: [Coordinate], speed: Double, driveDuration: Double = 240, stopDuration: Double = 60) {
        self.waypoints = waypoints
        self.speed = speed
        self.driveDuration = driveDuration
        self.stopDuration = stopDuration
    }

    /// A loop through central Zagreb at cycling speed (6 m/s), four minutes riding, one minute stopped.
    public static let zagrebLoop = Route(
        waypoints: [
            Coordinate(latitude: 45.81306, longitude: 15.97730),
            Coordinate(latitude: 45.81010, longitude: 15.98050),
            Coordinate(latitude: 45.80540, longitude: 15.97820),
            Coordinate(latitude: 45.80460, longitude: 15.96900),
            Coordinate(latitude: 45.80950, longitude: 15.96550),
            Coordinate(latitude: 45.81490, longitude: 15.96950),
        ],
        speed: 6)

    /// Loop length in metres.
    public var length: Double {
        legs.reduce(0) { $0 + $1.length }
    }

    /// Where the vehicle is `seconds` after the start.
    public func state(at seconds: Double) -> State {
        let cycle = driveDuration + stopDuration
        let cycles = (seconds / cycle).rounded(.down)
        let inCycle = seconds - cycles * cycle
        let moving = inCycle < driveDuration
        let travelled = (cycles * driveDuration + min(inCycle, driveDuration)) * speed
        var along = travelled.truncatingRemainder(dividingBy: max(length, 1))
        for leg in legs {
            if along <= leg.length {
                let point = Geodesy.interpolate(leg.from, leg.to, fraction: leg.length > 0 ? along / leg.length : 0)
                return State(coordinate: point, speed: moving ? speed : 0, course: leg.bearing)
            }
            along -= leg.length
        }
        return State(coordinate: waypoints.first ?? Coordinate(latitude: 0, longitude: 0), speed: 0, course: 0)
    }

    private var legs: [(from: Coordinate, to: Coordinate, length: Double, bearing: Double)] {
        guard waypoints.count > 1 else { return [] }
        return waypoints.indices.map { i in
            let from = waypoints[i], to = waypoints[(i + 1) % waypoints.count]
            return (from, to, Geodesy.distance(from, to), Geodesy.bearing(from: from, to: to))
        }
    }
}

extension Trace: Trajectory {
    /// The truth `seconds` after the trace's start, with speed and course over the second around it.
    public func state(at seconds: Double) -> Route.State {
        let time = start.addingTimeInterval(seconds)
        let before = position(at: time.addingTimeInterval(-1)), after = position(at: time.addingTimeInterval(1))
        let speed = Geodesy.distance(before, after) / 2
        return Route.State(coordinate: position(at: time), speed: speed, course: speed > 0.2 ? Geodesy.bearing(from: before, to: after) : 0)
    }
}
