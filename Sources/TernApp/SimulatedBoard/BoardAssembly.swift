import Foundation
import Logging
import TernCore
import TernSimulation

/// The simulated board wired into a pipeline: its GPS on a PTY, its supply switch, the audit of every
/// accepted and stored position against the board's truth. The one assembly `tern run` (receiver
/// kind "simulated") and `tern demo` share; each adds its own uplink, connectivity and services.
struct BoardAssembly {
    let board: SimulatedBoard
    let audit: BoardAudit
    /// `queue`, remembering what went through it and showing each stored position to the audit.
    let queue: RecordingQueue
    /// The pipeline's parts: the board's serial port and switch, the receiver dated from the board's
    /// start, the audit told of every accepted fix.
    var parts: Pipeline<ScaledClock>.Parts

    init(
        config: TernConfig, speed: Double, seed: UInt64, queue base: any PositionQueue, uplinkURL: URL, connectivity: any Connectivity,
        logger: Logger
    ) throws {
        board = try SimulatedBoard(speed: speed, seed: seed)
        audit = BoardAudit(board: board, filter: config.filter, logger: logger)
        queue = RecordingQueue(base, stored: audit.stored)
        parts = Pipeline<ScaledClock>.Parts(
            queue: queue, serialPort: board.serialPort, powerSwitch: board.power, uplinkURL: uplinkURL, connectivity: connectivity,
            receiverOptions: .init(dateReference: { [start = board.gps.utc(at: 0)] in .notBefore(start) }))
        parts.accepted = audit.accepted
    }
}
