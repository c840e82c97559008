import Foundation
import GRDB
import Testing
import TernCore
import TernTesting
@testable import TernStore

/// Damaged files, upgrades and read-only inspection: the queue never crash-loops and never loses
/// what still reads.
@Suite(.timeLimit(.minutes(1))) struct SQLitePositionQueueRecoveryTests {
    /// A queue written by Tern's schema v2 (v1 + scheduler memory; before the quarantine and counters
    /// of v3), with 21 positions queued (seq 1…21): made by `tern run` on the simulated board with an
    /// unreachable uplink.
    static let schemaV2 = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/queue-schema-v2.sqlite")

    private static let now = Date(timeIntervalSince1970: 1_795_600_000)

    private func openRecovering(_ path: String) throws -> (queue: SQLitePositionQueue, recovery: QueueRecovery?) {
        try SQLitePositionQueue.openRecovering(path: path, options: .init(ballastBytes: 0), logger: .quiet(), now: Self.now)
    }

    /// A queue at `path` with `count` positions, checkpointed into the main file and closed.
    private func writeQueue(_ path: String, count: Int) async throws {
        let queue = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
        _ = try await queue.enqueue(contentsOf: StoreFixture.positions(count))
        try await queue.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    private func flipByte(at offset: Int, in path: String) throws {
        let handle = try FileHandle(forUpdating: URL(filePath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try handle.read(upToCount: 1)?.first ?? 0
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [byte ^ 0xFF])
    }

    @Test func anUpgradeKeepsEveryPositionQueuedByTheEarlierSchema() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try FileManager.default.copyItem(at: Self.schemaV2, to: URL(filePath: path))
            let sut = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
            let queued = try await sut.oldest(limit: 100)
            #expect(queued.map(\.sequence) == Array(1...21))
            #expect(queued.first?.position.id == UUID(uuidString: "1054A243-E3BC-4A96-A312-3E9CC6A3C21D"))
            #expect(try await sut.enqueue(StoreFixture.position()) == 22)
        }
    }

    @Test func anUpgradeGivesAQueueOfAnEarlierSchemaAnIdentityItKeeps() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try FileManager.default.copyItem(at: Self.schemaV2, to: URL(filePath: path))
            let upgraded = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet()).queueID

            let sut = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())

            #expect(sut.queueID == upgraded)
        }
    }

    @Test func theReaderNeitherMigratesNorWrites() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try FileManager.default.copyItem(at: Self.schemaV2, to: URL(filePath: path))
            let before = try Data(contentsOf: URL(filePath: path))
            let sut = try QueueReader(path: path)
            #expect(try sut.stats().depth == 21)
            #expect(try sut.positions(limit: 5).map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(try sut.quickCheck() == ["ok"])
            #expect(try Data(contentsOf: URL(filePath: path)) == before)
        }
    }

    @Test func theReaderSeesWhatTheDaemonCommittedWhileItRuns() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            let writer = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
            _ = try await writer.enqueue(contentsOf: StoreFixture.positions(3))
            #expect(try QueueReader(path: path).stats().depth == 3)
        }
    }

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndANewQueueStarts() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try Data(repeating: 0xA5, count: 8192).write(to: URL(filePath: path))
            let (sut, recovery) = try openRecovering(path)
            let moved = try #require(recovery).movedTo
            #expect(moved == path + ".corrupt-20261125T094640")
            #expect(FileManager.default.fileExists(atPath: moved))
            #expect(try await sut.enqueue(StoreFixture.position()) > 0)
        }
    }

    @Test func aFlippedHeaderByteIsRecoveredFromWithoutACrash() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try await writeQueue(path, count: 10)
            try flipByte(at: 3, in: path)  // "SQLite format 3\0"
            let (sut, recovery) = try openRecovering(path)
            #expect(recovery != nil)
            #expect(try await sut.count() == 0)
            // The old sequence could not be read: the new queue continues above any count a queue reaches.
            #expect(try await sut.enqueue(StoreFixture.position()) > 1_795_600_000_000)
        }
    }

    @Test func aDamagedPageIsMovedAsideAndWhatStillReadsIsSalvagedWithItsIdsAndSequence() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try await writeQueue(path, count: 2000)
            // The table page holding position 1000 (found by its latitude, stored only in the row, as a
            // big-endian double): damage its header's page type byte.
            let file = try Data(contentsOf: URL(filePath: path))
            let time = StoreFixture.position(second: 1000).fix.coordinate.latitude.bitPattern.bigEndian
            let needle = withUnsafeBytes(of: time) { Data($0) }
            let offset = try #require(file.range(of: needle)?.lowerBound)
            // The page size from the database header (bytes 16-17, big-endian): new queues use 1 KiB pages.
            let pageSize = Int(file[16]) << 8 | Int(file[17])
            try flipByte(at: offset / pageSize * pageSize, in: path)
            let (sut, recovery) = try openRecovering(path)
            let report = try #require(recovery)
            #expect(report.salvaged > 0 && report.salvaged < 2000)
            let salvaged = try await sut.oldest(limit: 3)
            #expect(salvaged.first?.sequence == 1)
            #expect(salvaged.first?.position.fix.time == StoreFixture.position(second: 0).fix.time)
            #expect(report.sequenceFloor >= 2000)
            #expect(try await sut.enqueue(StoreFixture.position(second: 5000)) > 2000)
            #expect(try QueueReader(path: path).quickCheck() == ["ok"])
        }
    }

    @Test func aDamagedWALFrameDoesNotStopTheQueue() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            do {
                let queue = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
                _ = try await queue.enqueue(contentsOf: StoreFixture.positions(5))
                _ = try await queue.enqueue(contentsOf: (5..<10).map { StoreFixture.position(second: $0) })
            }
            // Copy the files as a power cut would leave them (the WAL not yet checkpointed), then damage
            // a byte in the last frame: SQLite stops replaying the WAL at a frame whose checksum fails.
            let crashed = dir.appending(path: "crashed.sqlite").path
            for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: crashed + suffix) }
            let wal = try Data(contentsOf: URL(filePath: crashed + "-wal")).count
            try flipByte(at: wal - 100, in: crashed + "-wal")
            let (sut, _) = try openRecovering(crashed)
            let left = try await sut.count()
            #expect(left >= 5 && left < 10)
            #expect(try await sut.enqueue(StoreFixture.position(second: 100)) > 0)
            #expect(try QueueReader(path: crashed).quickCheck() == ["ok"])
        }
    }
}
