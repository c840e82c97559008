import Foundation
import Testing
import TernCore
@testable import TernStore

@Suite struct SQLitePositionQueueTests {
    @Test func oldestReturnsPositionsInEnqueueOrder() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            let positions = StoreFixture.positions(5)
            for position in positions { try await sut.enqueue(position) }

            let oldest = try await sut.oldest(limit: 10)

            #expect(oldest.map(\.position) == positions)
            #expect(oldest.map(\.sequence) == [1, 2, 3, 4, 5])
        }
    }

    @Test func oldestHonoursTheLimit() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            for position in StoreFixture.positions(5) { try await sut.enqueue(position) }

            #expect(try await sut.oldest(limit: 2).map(\.sequence) == [1, 2])
        }
    }

    @Test func acknowledgeRemovesPositionsThroughTheSequence() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            for position in StoreFixture.positions(5) { try await sut.enqueue(position) }

            try await sut.acknowledge(through: 3)

            #expect(try await sut.oldest(limit: 10).map(\.sequence) == [4, 5])
        }
    }

    @Test func sequenceIsNeverReusedAfterEverythingWasAcknowledged() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            for position in StoreFixture.positions(3) { try await sut.enqueue(position) }
            try await sut.acknowledge(through: 3)

            let next = try await sut.enqueue(StoreFixture.position(second: 10))

            #expect(next == 4)
        }
    }

    @Test func positionsSurviveCloseAndReopen() async throws {
        try await withTemporaryDirectory { dir in
            let positions = StoreFixture.positions(3)
            do {
                let first = try SQLitePositionQueue(path: queuePath(in: dir))
                for position in positions { try await first.enqueue(position) }
            }

            let sut = try SQLitePositionQueue(path: queuePath(in: dir))

            #expect(try await sut.oldest(limit: 10).map(\.position) == positions)
        }
    }

    @Test func enqueueingAnAlreadyQueuedIdReturnsTheExistingSequence() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            let position = StoreFixture.position()
            let first = try await sut.enqueue(position)
            try await sut.enqueue(StoreFixture.position(second: 1))

            let again = try await sut.enqueue(position)

            #expect(again == first)
            #expect(try await sut.count() == 2)
        }
    }

    @Test func countReflectsEnqueuesAndAcknowledgements() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            for position in StoreFixture.positions(4) { try await sut.enqueue(position) }
            try await sut.acknowledge(through: 1)

            #expect(try await sut.count() == 3)
        }
    }

    @Test func statsReportDepthOldestTimeAndLastSequence() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            let positions = StoreFixture.positions(3)
            for position in positions { try await sut.enqueue(position) }
            try await sut.acknowledge(through: 1)

            let stats = try await sut.stats()

            #expect(stats == QueueStats(depth: 2, oldestTime: positions[1].fix.time, lastSequence: 3))
        }
    }

    @Test func statsOfAnEmptyQueueHaveNoOldestTime() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))

            #expect(try await sut.stats() == QueueStats(depth: 0, oldestTime: nil, lastSequence: nil))
        }
    }
}
