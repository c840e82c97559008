import Foundation
import TernCore

/// A ground-truth trajectory: timed positions, interpolated linearly (in degrees, fine over the
/// short gaps between samples) to give the truth at any second.
public struct Trace: Sendable, Hashable {
    public struct Point: Sendable, Hashable {
        public var time: Date
        public var coordinate: Coordinate

        public init(time: Date, coordinate: Coordinate) {
            self.time = time
            self.coordinate = coordinate
        }
    }

    public var name: String
    /// Samples in time order (at least one).
    public private(set) var points: [Point]

    /// Sorts the samples by time and drops samples that repeat a time.
    public init(name: String, points: [Point]) {
        self.name = name
        var sorted = points.sorted { $0.time < $1.time }
        sorted = sorted.enumerated().filter { $0.offset == 0 || sorted[$0.offset - 1].time != $0.element.time }.map(\.element)
        self.points = sorted
    }

    public var start: Date { points.first?.time ?? Date(timeIntervalSince1970: 0) }
    public var end: Date { points.last?.time ?? start }
    /// Seconds from the first to the last sample.
    public var duration: Double { end.timeIntervalSince(start) }

    /// The true position at `time` (clamped to the first/last sample).
    public func position(at time: Date) -> Coordinate {
        guard let first = points.first, let last = points.last else { return Coordinate(latitude: 0, longitude: 0) }
        if time <= first.time { return first.coordinate }
        if time >= last.time { return last.coordinate }
        var low = 0, high = points.count - 1
        while high - low > 1 {
            let mid = (low + high) / 2
            if points[mid].time <= time { low = mid } else { high = mid }
        }
        let a = points[low], b = points[high]
        let span = b.time.timeIntervalSince(a.time)
        let fraction = span > 0 ? time.timeIntervalSince(a.time) / span : 0
        return Geodesy.interpolate(a.coordinate, b.coordinate, fraction: fraction)
    }
}
