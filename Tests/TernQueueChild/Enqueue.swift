import ArgumentParser
import CTernCrashVFS
import Foundation
import Logging
import TernCore
import TernStore
import TernTesting

/// Enqueues positions under the crash VFS until it cuts the power.
struct Enqueue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enqueues positions through the crash VFS, printing `stored <id>` after each write returned, until the power is cut.")

    enum Synchronous: String, ExpressibleByArgument, CaseIterable {
        case full, normal
    }

    enum CutOn: String, ExpressibleByArgument, CaseIterable {
        /// Every write and sync counts.
        case any
        /// Syncs only (commits and checkpoints being made durable).
        case sync
        /// Writes and syncs of the database file, that is checkpoints.
        case database

        var vfsValue: Int32 {
            switch self {
            case .any: Int32(CTERN_CRASH_VFS_CUT_ON_ANY)
            case .sync: Int32(CTERN_CRASH_VFS_CUT_ON_SYNC)
            case .database: Int32(CTERN_CRASH_VFS_CUT_ON_DATABASE)
            }
        }
    }

    enum Commit: String, ExpressibleByArgument, CaseIterable {
        /// `enqueue(_:)`, one position per transaction.
        case single
        /// `enqueue(contentsOf:)`, 2 to 10 positions per transaction.
        case group
    }

    @Option(help: "The queue's database file.")
    var path: String

    @Option(help: "`normal` only for the harness's negative control: commits are then not fsynced.")
    var synchronous: Synchronous = .full

    @Option(help: "Cut the power at this write or sync call (counted from the start of the process); 0: never.")
    var crashAfter: Int64 = 0

    @Option(help: "Which calls count towards --crash-after: any, sync, or database (checkpoints).")
    var cutOn: CutOn = .any

    @Option(help: "Seeds the tearing and the group sizes.")
    var seed: UInt64 = 1

    @Flag(help: "At the cut, write part of what was not synced, some pieces with garbage (a torn write).")
    var tear = false

    @Option(help: "single or group.")
    var commit: Commit = .single

    @Option(help: "Runs the queue's housekeeping (a checkpoint) after every this many commits; 0: never.")
    var maintainEvery = 0

    @Option(help: "Acknowledges (deletes) the oldest queued position after every this many commits, as the uploader does; 0: never.")
    var acknowledgeEvery = 0

    @Option(help: "Stops (exit 0) after this many positions if the power was not cut.")
    var limit = 100_000

    func run() async throws {
        let installed = ctern_crash_vfs_install(crashAfter, cutOn.vfsValue, seed, tear ? 1 : 0, QueueChild.powerCutStatus)
        guard installed == 0 else { throw ValidationError("cannot register the crash VFS: SQLite error \(installed)") }
        var options = SQLitePositionQueue.Options()
        options.synchronous = synchronous == .full ? .full : .normal
        let queue = try SQLitePositionQueue(path: path, options: options, logger: Logger(label: "tern.queue.child"))
        emit(.opened(operations: ctern_crash_vfs_operations()))
        var random = SplitMix64(seed: seed)
        var written = 0
        var commits = 0
        while written < limit {
            switch commit {
            case .single:
                let position = makePosition(written, using: &random)
                try await queue.enqueue(position)
                emit(.stored(position.id))
                written += 1
            case .group:
                let count = Int.random(in: 2...10, using: &random)
                let positions = (0..<count).map { makePosition(written + $0, using: &random) }
                let result = try await queue.enqueue(contentsOf: positions)
                guard result.stored == positions.count else {
                    throw ValidationError("a group commit stored \(result.stored) of \(positions.count) positions")
                }
                for position in positions { emit(.stored(position.id)) }
                written += positions.count
            }
            commits += 1
            if acknowledgeEvery > 0, commits % acknowledgeEvery == 0, let oldest = try await queue.oldest(limit: 1).first {
                emit(.releasing(oldest.position.id))
                try await queue.acknowledge(through: oldest.sequence)
            }
            if maintainEvery > 0, commits % maintainEvery == 0 { try await queue.maintain() }
        }
    }
}
