import ArgumentParser
import Foundation
import Logging
import TernStore

#if canImport(Glibc)
import Glibc
#endif

/// Opens a damaged queue with `openRecovering`, killing itself with SIGKILL at one step of the
/// recovery: a crash, a power cut or the unit's memory limit striking there.
struct Recover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recovers the queue at --path, SIGKILLing itself at --crash-at (moved-aside, floor-recorded, chunk-N, finished).")

    @Option(help: "The queue database.")
    var path: String

    @Option(help: "The step to die at: moved-aside, floor-recorded, chunk-N (the N-th chunk copied), finished.")
    var crashAt: String

    func run() async throws {
        var chunks = 0
        let crashAt = crashAt
        _ = try SQLitePositionQueue.openRecovering(
            path: path, options: .init(ballastBytes: 0), logger: Logger(label: "tern.queue.child"),
            step: { step in
                let name: String
                switch step {
                case .movedAside: name = "moved-aside"
                case .floorRecorded: name = "floor-recorded"
                case .chunkCopied:
                    chunks += 1
                    name = "chunk-\(chunks)"
                case .finished: name = "finished"
                }
                if name == crashAt { kill(getpid(), SIGKILL) }
            })
        print("recovered without reaching \(crashAt)")
    }
}
