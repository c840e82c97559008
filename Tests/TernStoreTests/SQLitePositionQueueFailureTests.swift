import Foundation
import GRDB
import Testing
import TernCore
@testable import TernStore

@Suite(.timeLimit(.minutes(1))) struct SQLitePositionQueueFailureTests {
    @Test func unwritableDataDirectoryThrowsNotWritableNamingThePath() async throws {
        try await withTemporaryDirectory { dir in
            // A path below a regular file cannot be created, even by root.
            let file = dir.appendingPathComponent("not-a-dir")
            try Data("x".utf8).write(to: file)
            let path = file.appendingPathComponent("queue.sqlite").path

            let error = #expect(throws: QueueError.self) { try SQLitePositionQueue(path: path) }

            guard case .notWritable(path, _) = error else {
                Issue.record("expected notWritable, got \(String(describing: error))")
                return
            }
            #expect(error?.description.contains("owned by the user") == true)
        }
    }

    @Test func garbageFileThrowsCorruptNamingTheWalAndShmToo() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            try Data(repeating: 0xA5, count: 8192).write(to: URL(fileURLWithPath: path))

            let error = #expect(throws: QueueError.self) { try SQLitePositionQueue(path: path) }

            guard case .corrupt(path, _) = error else {
                Issue.record("expected corrupt, got \(String(describing: error))")
                return
            }
            #expect(error?.description.contains("-wal and -shm") == true)
        }
    }

    @Test func fullDiskThrowsDiskFullAndKeepsQueuedPositions() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            let sut = try SQLitePositionQueue(path: path)
            try await sut.enqueue(StoreFixture.position())
            try await limitDatabaseToItsCurrentSize(sut)

            var stored = 1
            let error = await #expect(throws: QueueError.diskFull(path: path)) {
                for second in 1..<10_000 {
                    try await sut.enqueue(StoreFixture.position(second: second))
                    stored += 1
                }
            }

            #expect(error?.description == "disk full writing \(path): free space; queued positions are kept")
            #expect(try await sut.count() == stored)
        }
    }

    /// Makes SQLite report SQLITE_FULL as soon as the writer needs one more page.
    private func limitDatabaseToItsCurrentSize(_ queue: SQLitePositionQueue) async throws {
        try await queue.pool.write { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
    }
}
