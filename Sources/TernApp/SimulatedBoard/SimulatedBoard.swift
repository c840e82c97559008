import Foundation
import Logging
import ServiceLifecycle
import TernCore
import TernGateway
import TernHardware
import TernSimulation

/// The built-in simulated board: a simulated GPS module on a PTY behind a simulated supply switch,
/// read through the real termios adapter.
public struct SimulatedBoard: Sendable {
    public let power: SimulatedPowerSwitch
    public let gps: SimulatedGPS
    public let serialPort: TermiosSerialPort
    public let clock: ScaledClock
    /// Where the simulated receiver truly is, and how it behaves.
    public let route: any Trajectory
    public let model: ReceiverModel

    /// - Parameters:
    ///   - route: where the simulated receiver truly is (a loop through Zagreb, or a recorded trace).
    ///   - model: the simulated module's behaviour (times to first fix, noise, baud rate).
    public init(
        speed: Double, seed: UInt64, startTime: Date = Date(), route: any Trajectory = Route.zagrebLoop,
        model: ReceiverModel = .mt3339
    ) throws {
        self.route = route
        self.model = model
        power = SimulatedPowerSwitch()
        // Start on a whole second, as receivers report.
        let start = Date(timeIntervalSince1970: startTime.timeIntervalSince1970.rounded(.down))
        gps = try SimulatedGPS(power: power, options: .init(route: route, startTime: start, model: model, seed: seed))
        serialPort = try TermiosSerialPort.open(path: gps.devicePath, baudRate: 9600)
        clock = ScaledClock(speed: speed)
    }

    /// Runs the simulated GPS until graceful shutdown, its epochs on the clock's whole seconds (its
    /// UTC at clock time t is `gps.utc(at: t)`).
    public var service: any Service {
        TaskService("simulated-gps") { [gps, clock] in
            try await cancelWhenGracefulShutdown { try await gps.run(clock: clock, from: clock.origin) }
        }
    }
}
