import Foundation
import ServiceLifecycle
import TernStore

/// Ends tern once its queue was found corrupt while running (`SQLitePositionQueue.damage`): the
/// group shuts down gracefully, so what waits is written (into the queue's spill file, fsynced), and
/// `tern run` exits 1; systemd restarts it (`Restart=on-failure`) and the start salvages the database
/// and imports the spill (`SQLitePositionQueue.openRecovering`). Nothing stored is lost.
struct QueueDamageWatch: Service, CustomStringConvertible {
    let queue: SQLitePositionQueue
    var interval: Duration = .seconds(2)
    var description: String { "queue-damage-watch" }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: interval)
                    if let damage = queue.damage { throw QueueDamaged(path: queue.path, reason: damage) }
                }
            }
        } catch is CancellationError {
            return
        }
    }
}

/// Why `tern run` stops after its queue turned corrupt: to be restarted and salvage it.
struct QueueDamaged: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String {
        "the queue database \(path) turned corrupt while running (\(reason)): stopping so that systemd restarts tern and the "
            + "start salvages it; positions stored since are in \(path).spill and are imported then"
    }
}
