import Foundation
import GRDB
import Testing
import TernCore
@testable import TernStore

/// A queue that turns corrupt while tern runs (issue 31): it marks itself, keeps new positions in an
/// fsynced spill file, and the next open salvages the database and imports the spill; nothing stored
/// is lost.
@Suite(.timeLimit(.minutes(1))) struct QueueDamageTests {
    private static let now = Date(timeIntervalSince1970: 1_795_600_000)

    private func open(_ path: String) throws -> SQLitePositionQueue {
        try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
    }

    private func openRecovering(_ path: String) throws -> (queue: SQLitePositionQueue, recovery: QueueRecovery?) {
        try SQLitePositionQueue.openRecovering(path: path, options: .init(ballastBytes: 0), logger: .quiet(), now: Self.now)
    }

    /// Damages, under a running queue, the table page holding position `second` (its type byte), and
    /// drops the connections' page caches so that the next read meets it.
    private func damagePage(holding second: Int, of queue: SQLitePositionQueue) async throws {
        try await queue.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        let file = try Data(contentsOf: URL(filePath: queue.path))
        let latitude = StoreFixture.position(second: second).fix.coordinate.latitude.bitPattern.bigEndian
        let offset = try #require(file.range(of: withUnsafeBytes(of: latitude) { Data($0) })?.lowerBound)
        let pageSize = Int(file[16]) << 8 | Int(file[17])
        let handle = try FileHandle(forUpdating: URL(filePath: queue.path))
        try handle.seek(toOffset: UInt64(offset / pageSize * pageSize))
        try handle.write(contentsOf: [0x55])
        try handle.close()
        queue.pool.releaseMemory()
    }

    @Test func aCorruptionMetWhileRunningMarksTheQueueDamaged() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try open(queuePath(in: dir))
            _ = try await sut.enqueue(contentsOf: StoreFixture.positions(2000))
            try await damagePage(holding: 1000, of: sut)

            await #expect(throws: QueueError.self) { _ = try await sut.oldest(limit: 2000) }

            #expect(sut.damage != nil)
            #expect(FileManager.default.fileExists(atPath: sut.path + ".damaged"))
        }
    }

    @Test func positionsGivenToADamagedQueueAreKeptInItsSpillFile() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try open(queuePath(in: dir))
            sut.noteDamage("a test")

            let result = try await sut.enqueue(contentsOf: (0..<3).map { StoreFixture.position(second: $0) })

            #expect(result.stored == 3)
            let lines = try String(contentsOfFile: sut.path + ".spill", encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 3)
        }
    }

    @Test func theNextOpenSalvagesADamagedQueueAndImportsItsSpillAfterTheSalvagedPositions() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            let old = StoreFixture.positions(2000)
            let new = (5000..<5005).map { StoreFixture.position(second: $0) }
            do {
                let running = try open(path)
                _ = try await running.enqueue(contentsOf: old)
                try await damagePage(holding: 1000, of: running)
                _ = try? await running.oldest(limit: 2000)
                #expect(try await running.enqueue(contentsOf: new).stored == 5)
            }

            let (sut, recovery) = try openRecovering(path)

            let report = try #require(recovery)
            #expect(report.reason.contains("while running"))
            let queued = try await sut.oldest(limit: 3000)
            #expect(Array(queued.suffix(5).map(\.position)) == new)
            #expect(queued.count > 5 && queued.count < 2005)
            #expect(queued.first?.position == old.first)
            #expect(!FileManager.default.fileExists(atPath: path + ".spill"))
            #expect(!FileManager.default.fileExists(atPath: path + ".damaged"))
            #expect(try QueueReader(path: path).quickCheck() == ["ok"])
        }
    }

    @Test func aMarkedQueueIsSalvagedEvenWhenItsPagesCheckOk() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            do { _ = try await open(path).enqueue(contentsOf: StoreFixture.positions(10)) }
            try Data("SQLITE_CORRUPT on a read\n".utf8).write(to: URL(filePath: path + ".damaged"))

            let (sut, recovery) = try openRecovering(path)

            #expect(recovery?.salvaged == 10)
            #expect(try await sut.count() == 10)
            #expect(!FileManager.default.fileExists(atPath: path + ".damaged"))
        }
    }

    @Test func aSpillLineTornByAPowerCutIsSkippedAndTheRestImported() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            let kept = StoreFixture.position(second: 1)
            do {
                let running = try open(path)
                running.noteDamage("a test")
                _ = try await running.enqueue(contentsOf: [kept])
            }
            let handle = try FileHandle(forWritingTo: URL(filePath: path + ".spill"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(#"{"id":"6F9619FF-8B86-D011-B42D-00C0"#.utf8))
            try handle.close()

            let (sut, _) = try openRecovering(path)

            #expect(try await sut.oldest(limit: 10).map(\.position) == [kept])
        }
    }
}
