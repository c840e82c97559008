import Foundation
import GRDB
import Synchronization
import Testing
import TernCore
@testable import TernStore

@Suite(.timeLimit(.minutes(1))) struct SQLitePositionQueueTests {
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

    @Test func aQueueKeepsItsIdentityAcrossReopens() async throws {
        try await withTemporaryDirectory { dir in
            let first = try SQLitePositionQueue(path: queuePath(in: dir)).queueID

            let sut = try SQLitePositionQueue(path: queuePath(in: dir))

            #expect(sut.queueID == first)
        }
    }

    @Test func aQueueCreatedAfreshWhereAnotherWasHasAnotherIdentity() async throws {
        try await withTemporaryDirectory { dir in
            let path = queuePath(in: dir)
            let first = try SQLitePositionQueue(path: path).queueID
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

            let sut = try SQLitePositionQueue(path: path)

            #expect(sut.queueID != first)
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

    /// The uploader may send and acknowledge a position between its commit and `enqueue`'s return
    /// (with an uploader acknowledging as fast as it can, 2 of 3,000 single-row enqueues threw):
    /// `enqueue` must still return its sequence number, not report a stored position as refused.
    @Test func enqueueReturnsTheSequenceOfAPositionAcknowledgedRightAfterItsCommit() async throws {
        try await withTemporaryDirectory { dir in
            let acknowledgeAfterCommit = AcknowledgeAfterNextCommit()
            let sut = try SQLitePositionQueue(path: queuePath(in: dir), prepare: { db in
                db.add(transactionObserver: acknowledgeAfterCommit, extent: .databaseLifetime)
            })
            acknowledgeAfterCommit.arm()

            let sequence = try await sut.enqueue(StoreFixture.position())

            #expect(sequence == 1)
            #expect(acknowledgeAfterCommit.acknowledged == 1)
            #expect(try await sut.count() == 0)
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

    @Test func aNewQueueHasOneKibibytePages() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))

            #expect(try await sut.pool.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 1024)
        }
    }

    @Test func anExistingQueueKeepsItsPageSizeAndItsPositions() async throws {
        try await withTemporaryDirectory { dir in
            let positions = StoreFixture.positions(3)
            do {
                let older = try SQLitePositionQueue(path: queuePath(in: dir), options: .init(pageSize: 4096))
                for position in positions { try await older.enqueue(position) }
            }

            let sut = try SQLitePositionQueue(path: queuePath(in: dir))

            #expect(try await sut.pool.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 4096)
            #expect(try await sut.oldest(limit: 10).map(\.position) == positions)
        }
    }

    @Test func theWriterIsBackToSynchronousFullAfterAnUnsyncedAcknowledgement() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            for position in StoreFixture.positions(2) { try await sut.enqueue(position) }

            try await sut.acknowledge(through: 1)

            #expect(try await sut.synchronousMode() == 2)
        }
    }
}

/// Once armed, deletes every queued position right after the next commit, as an acknowledgement
/// that slips in between a write and what follows it.
private final class AcknowledgeAfterNextCommit: TransactionObserver, Sendable {
    private let state = Mutex((armed: false, acknowledged: 0))

    func arm() { state.withLock { $0.armed = true } }
    var acknowledged: Int { state.withLock { $0.acknowledged } }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidRollback(_ db: Database) {}

    func databaseDidCommit(_ db: Database) {
        guard state.withLock({ state in defer { state.armed = false }; return state.armed }) else { return }
        try? db.execute(sql: "DELETE FROM positions")
        let deleted = db.changesCount
        state.withLock { $0.acknowledged += deleted }
    }
}
