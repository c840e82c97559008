import Foundation
import TernCore

/// A synthetic, deterministic situation for the scheduler: a ground-truth trace, the intervals
/// when the receiver sees no sky, and (for the parked day) when the tracker starts moving.
public struct Scenario: Sendable, Hashable {
    /// `commute`, `parked-day` or `indoor`.
    public var name: String
    public var trace: Trace
    /// Seconds since `trace.start` when the receiver cannot see the sky (indoors, underground).
    public var noSky: [ClosedRange<Double>]
    /// Seconds since `trace.start` when a tracker that stood still starts moving.
    public var departure: Double?

    public init(name: String, trace: Trace, noSky: [ClosedRange<Double>] = [], departure: Double? = nil) {
        self.name = name
        self.trace = trace
        self.noSky = noSky
        self.departure = departure
    }

    /// The scenario names, as `tern simulate --scenario` takes them.
    public static let names = ["commute", "parked-day", "parked-3-days", "indoor"]

    /// All scenarios, in `names` order.
    public static var all: [Scenario] { [commute, parkedDay, parkedThreeDays, indoor] }

    /// The scenario called `name` (see `names`), nil for an unknown name.
    public static func named(_ name: String) -> Scenario? {
        switch name {
        case "commute": commute
        case "parked-day", "parkedDay", "parked": parkedDay
        case "parked-3-days", "parkedThreeDays": parkedThreeDays
        case "indoor": indoor
        default: nil
        }
    }

    /// 2026-03-02 07:30 UTC, a Monday morning: where every scenario starts.
    static let origin = Date(timeIntervalSince1970: 1_772_436_600)

    /// Home to work across Zagreb in one hour: 60 s at home, a car ride with five traffic lights
    /// (8-22 m/s), a 10-minute coffee stop, the car left at a car park, the last 5 km by bike
    /// (4.5-5.5 m/s) with two more lights, three minutes at the office.
    public static let commute: Scenario = {
        var b = TraceBuilder(start: Coordinate(latitude: 45.79520, longitude: 15.93010), origin: origin)
        b.wait(60)
        b.go([(90, 350), (0, 250)], speed: 8, acceleration: 1.5)
        b.wait(45)
        b.go([(20, 1800), (60, 2200)], speed: 16, acceleration: 1.5)
        b.wait(60)
        b.go([(80, 3000)], speed: 13, acceleration: 1.5)
        b.wait(30)
        b.go([(110, 2500), (75, 2500)], speed: 22, acceleration: 1.5)
        b.wait(50)
        b.go([(0, 900), (300, 600)], speed: 10, acceleration: 1.5)
        b.wait(600)  // coffee
        b.go([(30, 1500), (90, 1000)], speed: 12, acceleration: 1.5)
        b.wait(40)
        b.go([(170, 1200)], speed: 9, acceleration: 1.5)
        b.wait(120)  // park, unlock the bike
        b.go([(100, 1500), (45, 1000)], speed: 5.5, acceleration: 1)
        b.wait(35)
        b.go([(10, 1800)], speed: 5, acceleration: 1)
        b.wait(25)
        b.go([(280, 500), (0, 400)], speed: 4.5, acceleration: 1)
        b.wait(until: 3600)
        return Scenario(name: "commute", trace: Trace(name: "commute", points: b.points))
    }()

    /// 24 hours at one parking spot; in its last 20 minutes the vehicle drives off (at
    /// `departure`), so the delay before a fix shows it moving can be measured.
    public static let parkedDay: Scenario = {
        var b = TraceBuilder(start: Coordinate(latitude: 45.81306, longitude: 15.97730), origin: origin)
        let departure = 86_400.0 - 1200
        b.wait(until: departure)
        b.go([(270, 60), (180, 140)], speed: 5, acceleration: 1.5)
        b.go([(180, 2000), (240, 3000)], speed: 11, acceleration: 1.5)
        b.wait(60)
        b.go([(300, 4000)], speed: 14, acceleration: 1.5)
        b.wait(until: 86_400)
        return Scenario(
            name: "parked-day", trace: Trace(name: "parked-day", points: b.points), departure: departure)
    }()

    /// 72 hours at one parking spot from a cold boot (the receiver has never run); in its last 20
    /// minutes the vehicle drives off (at `departure`), as on `parkedDay`. Each day after the first
    /// shows the steady cost of waiting; the first includes the cold start and the cautious beginning.
    public static let parkedThreeDays: Scenario = {
        var b = TraceBuilder(start: Coordinate(latitude: 45.81306, longitude: 15.97730), origin: origin)
        let end = 3 * 86_400.0
        let departure = end - 1200
        b.wait(until: departure)
        b.go([(270, 60), (180, 140)], speed: 5, acceleration: 1.5)
        b.go([(180, 2000), (240, 3000)], speed: 11, acceleration: 1.5)
        b.wait(60)
        b.go([(300, 4000)], speed: 14, acceleration: 1.5)
        b.wait(until: end)
        return Scenario(
            name: "parked-3-days", trace: Trace(name: "parked-3-days", points: b.points), departure: departure)
    }()

    /// A 75-minute walk (1.4 m/s) that goes indoors three times: 12 minutes in a shop (browsing,
    /// slow), 6 minutes along an underground passage (walking on), 20 minutes at an office (mostly
    /// seated). Those three spans are `noSky`.
    public static let indoor: Scenario = {
        var b = TraceBuilder(start: Coordinate(latitude: 45.80500, longitude: 15.97000), origin: origin)
        var noSky: [ClosedRange<Double>] = []
        b.wait(30)
        b.go([(0, 300), (90, 300), (45, 240)], speed: 1.4, acceleration: 0.5)
        var entered = b.time
        for (bearing, pause) in [(0.0, 90.0), (90, 120), (180, 150), (270, 100), (45, 90)] {
            b.go([(bearing, 15)], speed: 0.6, acceleration: 0.3)
            b.wait(pause)
        }
        b.wait(until: entered + 720)
        noSky.append(entered...b.time)
        b.go([(135, 500), (90, 500), (180, 260)], speed: 1.4, acceleration: 0.5)
        entered = b.time
        b.go([(90, 400)], speed: 1.2, acceleration: 0.5)
        b.wait(until: entered + 360)
        noSky.append(entered...b.time)
        b.go([(60, 400), (0, 270)], speed: 1.4, acceleration: 0.5)
        entered = b.time
        b.go([(0, 25), (90, 15)], speed: 1, acceleration: 0.5)
        b.wait(until: entered + 1200)
        noSky.append(entered...b.time)
        b.go([(180, 200), (270, 220)], speed: 1.4, acceleration: 0.5)
        b.wait(until: 4500)
        return Scenario(name: "indoor", trace: Trace(name: "indoor", points: b.points), noSky: noSky)
    }()
}

/// Builds a trace second by second: waits, and rides along polylines with a trapezoidal speed
/// profile (accelerate from rest, cruise, brake to rest).
struct TraceBuilder {
    private(set) var points: [Trace.Point]
    private(set) var time: Double = 0
    private(set) var position: Coordinate
    let origin: Date

    init(start: Coordinate, origin: Date) {
        self.position = start
        self.origin = origin
        self.points = [Trace.Point(time: origin, coordinate: start)]
    }

    /// Stands still for `seconds`.
    mutating func wait(_ seconds: Double) {
        guard seconds > 0 else { return }
        time += seconds
        points.append(Trace.Point(time: origin.addingTimeInterval(time), coordinate: position))
    }

    /// Stands still until `seconds` since the start (nothing if already later).
    mutating func wait(until seconds: Double) { wait(seconds - time) }

    /// Rides the legs (bearing in degrees true, metres) from rest to rest, cruising at `speed` m/s,
    /// accelerating and braking at `acceleration` m/s²; one sample per second.
    mutating func go(_ legs: [(bearing: Double, metres: Double)], speed: Double, acceleration: Double) {
        var vertices = [position]
        for leg in legs {
            vertices.append(Geodesy.destination(from: vertices[vertices.count - 1], distance: leg.metres, bearing: leg.bearing))
        }
        let lengths = legs.map(\.metres)
        let total = lengths.reduce(0, +)
        guard total > 0, speed > 0, acceleration > 0 else { return }
        let cruise = min(speed, (total * acceleration).squareRoot())
        let rampTime = cruise / acceleration
        let rampDistance = cruise * rampTime / 2
        let cruiseTime = (total - 2 * rampDistance) / cruise
        let duration = 2 * rampTime + cruiseTime
        func travelled(_ t: Double) -> Double {
            if t < rampTime { return acceleration * t * t / 2 }
            if t < rampTime + cruiseTime { return rampDistance + cruise * (t - rampTime) }
            let left = duration - t
            return total - acceleration * left * left / 2
        }
        func point(at distance: Double) -> Coordinate {
            var along = distance
            for (index, length) in lengths.enumerated() {
                if along <= length {
                    return Geodesy.interpolate(vertices[index], vertices[index + 1], fraction: length > 0 ? along / length : 0)
                }
                along -= length
            }
            return vertices[vertices.count - 1]
        }
        var t = 1.0
        while t < duration {
            points.append(Trace.Point(time: origin.addingTimeInterval(time + t), coordinate: point(at: travelled(t))))
            t += 1
        }
        time += duration
        position = vertices[vertices.count - 1]
        points.append(Trace.Point(time: origin.addingTimeInterval(time), coordinate: position))
    }
}
