import Foundation
import Testing
import TernCore
@testable import TernSimulation

/// The simulated receiver's reports carry the faults its error model put in them.
@Suite struct SimulatedFixesTests {
    private static let here = Route.State(coordinate: Coordinate(latitude: 45.8, longitude: 15.97), speed: 0, course: 0)
    private static let start = Date(timeIntervalSince1970: 1_795_219_200)
    private static let settled = SimulatedFixes.StartUp(noisyFixes: 0, noisyFactor: 1)

    private func fixes(_ change: (inout FixErrorModel.Parameters) -> Void) -> SimulatedFixes {
        var parameters = FixErrorModel.Parameters.forReceiver(.mt3339)
        change(&parameters)
        return SimulatedFixes(model: .mt3339, seed: 3, parameters: parameters)
    }

    @Test func anOutlierIsMarkedWithItsOffset() {
        var sut = fixes { $0.outlierRate = 1 }
        let report = sut.report(time: Self.start, truth: Self.here, number: 5, startUp: Self.settled)
        guard case let .outlier(offset) = report.fault else {
            Issue.record("no outlier mark: \(String(describing: report.fault))")
            return
        }
        #expect(offset >= 90)
        #expect(abs(Geodesy.distance(report.fix.coordinate, Self.here.coordinate) - offset) < 1)
    }

    @Test func aStaleRepeatIsMarkedAtTheFirstFixOfTheNextStart() {
        var sut = fixes { $0.staleRate = 1 }
        let last = sut.report(time: Self.start, truth: Self.here, number: 1, startUp: Self.settled)
        var moved = Self.here
        moved.coordinate = Geodesy.destination(from: Self.here.coordinate, distance: 2000, bearing: 0)
        let next = sut.report(time: Self.start.addingTimeInterval(600), truth: moved, number: 1, startUp: Self.settled)
        #expect(next.fault == .staleRepeat)
        #expect(next.fix.coordinate == last.fix.coordinate)
    }

    @Test func anOrdinaryFixHasNoFault() {
        var sut = fixes { $0.outlierRate = 0; $0.staleRate = 0 }
        var same = fixes { $0.outlierRate = 0; $0.staleRate = 0 }
        let report = sut.report(time: Self.start, truth: Self.here, number: 1, startUp: Self.settled)
        #expect(report.fault == nil)
        #expect(same.fix(time: Self.start, truth: Self.here, number: 1, startUp: Self.settled) == report.fix)
    }
}
