import Foundation
import Testing
import TernCore

@testable import TernSimulation

/// The scheduler, run by the gateway's core against the simulated receiver, never meets an event its
/// state cannot: each would come back as `.invalidEvent` (a programming error in the shell or the cycle).
@Suite struct SchedulerEventTests {
    /// Parked 20 minutes, then 40 minutes at 8 m/s with a right-angle turn; the sky gone for 10 of them.
    private func trace() -> Trace {
        let origin = Coordinate(latitude: 45, longitude: 15)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let corner = Geodesy.destination(from: origin, distance: 8 * 1200, bearing: 0)
        let end = Geodesy.destination(from: corner, distance: 8 * 1200, bearing: 90)
        return Trace(name: "park-drive-turn", points: [
            .init(time: start, coordinate: origin),
            .init(time: start.addingTimeInterval(1200), coordinate: origin),
            .init(time: start.addingTimeInterval(2400), coordinate: corner),
            .init(time: start.addingTimeInterval(3600), coordinate: end),
        ])
    }

    @Test(arguments: [FixPolicy.alwaysOn, .fixed(interval: .seconds(30)), .shipped], [ReceiverModel.mt3339, .ubloxM8])
    func noPolicyMeetsAnInvalidEventThroughAParkADriveAndALostSky(policy: FixPolicy, receiver: ReceiverModel) {
        let options = SimulationOptions(policy: policy, receiver: receiver, seed: 3, noSky: [2000...2600])
        var run = SimulationRun(trace: trace(), options: options, scheduler: options.schedulerOptions)
        run.run()
        #expect(run.core.scheduler.cyclesWithFix > 0)
        #expect(run.core.scheduler.invalidEvents == 0)
    }
}
