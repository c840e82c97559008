import Foundation
import GRDB
import Testing
import TernCore
import TernTesting
@testable import TernStore

#if canImport(Glibc)
import Glibc
#endif

/// A salvage cut short at every step (the child process SIGKILLs itself there, as a crash, a power
/// cut or the unit's memory limit would): the next start finishes it, and the queue ends up with
/// every position that reads in the damaged file, their sequence numbers, and a floor above the old
/// sequence. Nothing is stranded aside, nothing is salvaged twice.
@Suite(.timeLimit(.minutes(3))) struct QueueRecoveryCrashTests {
    static let count = 4500
    static let steps = ["moved-aside", "floor-recorded", "chunk-1", "chunk-3", "finished"]

    /// A queue of `count` positions whose table page holding position 4400 is damaged: it fails to
    /// open, and about 4400 positions still read, in several chunks.
    private func damagedQueue(_ path: String) async throws {
        do {
            let queue = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
            _ = try await queue.enqueue(contentsOf: StoreFixture.positions(Self.count))
            try await queue.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        }
        let file = try Data(contentsOf: URL(filePath: path))
        let latitude = StoreFixture.position(second: 4400).fix.coordinate.latitude.bitPattern.bigEndian
        let offset = try #require(file.range(of: withUnsafeBytes(of: latitude) { Data($0) })?.lowerBound)
        let pageSize = Int(file[16]) << 8 | Int(file[17])
        let handle = try FileHandle(forUpdating: URL(filePath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset / pageSize * pageSize))
        let byte = try handle.read(upToCount: 1)?.first ?? 0
        try handle.seek(toOffset: UInt64(offset / pageSize * pageSize))
        try handle.write(contentsOf: [byte ^ 0xFF])
    }

    /// The sequence numbers queued at `path`, opened as the daemon opens it.
    private func recoveredSequences(_ path: String) async throws -> (sequences: [Int64], next: Int64) {
        let (queue, _) = try SQLitePositionQueue.openRecovering(path: path, options: .init(ballastBytes: 0), logger: .quiet())
        let sequences = try await queue.oldest(limit: Self.count * 2).map(\.sequence)
        let next = try await queue.enqueue(StoreFixture.position(second: 90_000))
        return (sequences, next)
    }

    @Test(.enabled(if: QueueChild.url != nil, "tern-queue-child was not built"))
    func aSalvageCutShortAtAnyStepFinishesAtTheNextStart() async throws {
        let child = try #require(QueueChild.url)
        var expected: [Int64] = []
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try await damagedQueue(path)
            expected = try await recoveredSequences(path).sequences
        }
        #expect(expected.count > 3 * SQLitePositionQueue.salvageChunk && expected.count < Self.count, "\(expected.count) salvaged")
        for step in Self.steps {
            try await withTemporaryDirectory { dir in
                let path = queuePath(in: dir)
                try await damagedQueue(path)
                let killed = try await ChildProcess.offload {
                    try ChildProcess(executable: child, arguments: ["recover", "--path", path, "--crash-at", step]).finish()
                }
                #expect(killed.termination == .signalled(SIGKILL), "\(step): \(killed.termination) \(killed.stderr.suffix(500))")
                let (sequences, next) = try await recoveredSequences(path)
                print("recovery killed at \(step): \(sequences.count) of \(expected.count) salvaged positions after the restart, next sequence \(next)")
                #expect(sequences == expected, "killed at \(step): the restart salvaged what reads, once")
                #expect(next > Int64(Self.count), "killed at \(step): the sequence continues above the old queue's")
                let again = try await recoveredSequences(path)
                #expect(again.sequences.count == expected.count + 1, "killed at \(step): a second start salvages nothing again")
            }
        }
    }
}
