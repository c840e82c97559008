import Foundation
import GRDB
import Testing
import TernCore
import TernTesting
@testable import TernStore

/// Durability settings, group commits, the capacity rules and the quarantine, on real SQLite files.
@Suite(.timeLimit(.minutes(1))) struct SQLitePositionQueueCapacityTests {
    private func makeSUT(
        in dir: URL, maxPositions: Int = 1_000_000, maxBytes: Int = 256 << 20, maxAge: Duration? = nil,
        overflow: QueueCapacity.Overflow = .dropOldest
    ) throws -> SQLitePositionQueue {
        try SQLitePositionQueue(
            path: queuePath(in: dir),
            options: .init(
                capacity: .init(maxPositions: maxPositions, maxBytes: maxBytes, maxAge: maxAge, overflow: overflow),
                ballastBytes: 0),
            logger: .quiet())
    }

    private func seconds(_ queue: SQLitePositionQueue) async throws -> [Int] {
        try await queue.oldest(limit: 10_000).map { Int($0.position.fix.time.timeIntervalSince(StoreFixture.start)) }
    }

    @Test func theWriterCommitsWithSynchronousFull() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir)
            #expect(try await sut.synchronousMode() == 2)
        }
    }

    @Test func aGroupIsStoredInOrderInOneWrite() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir)
            let result = try await sut.enqueue(contentsOf: StoreFixture.positions(5))
            #expect(result == EnqueueResult(stored: 5))
            #expect(try await sut.oldest(limit: 10).map(\.sequence) == [1, 2, 3, 4, 5])
        }
    }

    @Test func aPositionAlreadyQueuedIsNotStoredTwice() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir)
            let position = StoreFixture.position()
            _ = try await sut.enqueue(contentsOf: [position])
            #expect(try await sut.enqueue(contentsOf: [position]).stored == 0)
            #expect(try await sut.count() == 1)
        }
    }

    @Test func dropOldestKeepsTheNewestAndCountsTheDrops() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir, maxPositions: 100)
            _ = try await sut.enqueue(contentsOf: StoreFixture.positions(100))
            let result = try await sut.enqueue(contentsOf: (100..<103).map { StoreFixture.position(second: $0) })
            #expect(result.dropped == QueueDrops(oldest: 3))
            #expect(try await seconds(sut).prefix(2) == [3, 4])
            #expect(try await sut.stats().dropped.oldest == 3)
        }
    }

    @Test func thinOldestDropsEveryOtherPositionOfTheOldestStretch() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir, maxPositions: 100, overflow: .thinOldest)
            _ = try await sut.enqueue(contentsOf: StoreFixture.positions(100))
            let result = try await sut.enqueue(contentsOf: (100..<103).map { StoreFixture.position(second: $0) })
            #expect(result.dropped == QueueDrops(thinned: 3))
            #expect(try await seconds(sut).prefix(6) == [0, 2, 4, 6, 7, 8])
            #expect(try await sut.count() == 100)
        }
    }

    @Test func rejectNewKeepsWhatIsQueuedAndCountsTheRefusals() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir, maxPositions: 100, overflow: .rejectNew)
            _ = try await sut.enqueue(contentsOf: StoreFixture.positions(99))
            let result = try await sut.enqueue(contentsOf: (99..<102).map { StoreFixture.position(second: $0) })
            #expect(result == EnqueueResult(stored: 1, dropped: QueueDrops(rejectedNew: 2)))
            #expect(try await seconds(sut).last == 99)
            await #expect(throws: QueueError.capacityReached(path: sut.path)) {
                try await sut.enqueue(StoreFixture.position(second: 200))
            }
            #expect(try await sut.stats().dropped.rejectedNew == 3)
        }
    }

    @Test func positionsOlderThanTheMaximumAgeAreDropped() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir, maxAge: .seconds(3600))
            _ = try await sut.enqueue(contentsOf: StoreFixture.positions(3))
            try await sut.pool.write { db in try db.execute(sql: "UPDATE positions SET enqueued_at = enqueued_at - 7200 WHERE seq <= 2") }
            #expect(try await sut.maintain() == QueueDrops(expired: 2))
            #expect(try await seconds(sut) == [2])
            #expect(try await sut.stats().dropped.expired == 2)
        }
    }

    @Test func theByteLimitDropsTheOldestUntilThePagesFit() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir, maxBytes: 64 << 10)
            for start in stride(from: 0, to: 3000, by: 100) {
                _ = try await sut.enqueue(contentsOf: (start..<start + 100).map { StoreFixture.position(second: $0) })
            }
            let used = try await sut.read { db in try SQLitePositionQueue.usedBytes(db) }
            #expect(used <= 64 << 10)
            #expect(try await sut.stats().dropped.oldest > 0)
            #expect(try await seconds(sut).last == 2999)
        }
    }

    @Test func anUndecodableRowIsQuarantinedAndTheQueueGoesOn() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try makeSUT(in: dir)
            _ = try await sut.enqueue(contentsOf: StoreFixture.positions(3))
            try await sut.pool.write { db in
                try db.execute(sql: "UPDATE positions SET id = 'not-a-uuid' WHERE seq = 1")
                try db.execute(sql: "UPDATE positions SET lat = 'north' WHERE seq = 2")
            }
            #expect(try await sut.oldest(limit: 10).map(\.sequence) == [3])
            let stats = try await sut.stats()
            #expect(stats.quarantined == 2 && stats.inQuarantine == 2 && stats.depth == 1)
            let kept = try QueueReader(path: sut.path).quarantine(limit: 10)
            #expect(kept.map(\.sequence) == [1, 2])
            #expect(kept.first?.columns["id"] == "not-a-uuid")
        }
    }
}
