import Foundation
import GRDB
import Testing
import TernCore
@testable import TernStore

@Suite(.timeLimit(.minutes(1))) struct SQLiteSchedulerMemoryTests {
    private let memory = FixScheduler.Memory(
        elapsedSeconds: 86_000, badTimeSeconds: 120, typicalSpeed: 12.5, ephemerisAgeSeconds: 1800,
        lastFix: .init(time: .seconds(5), coordinate: .init(latitude: 45.81, longitude: 15.97), speed: 0, course: nil, accuracy: 4),
        lastFixAgeSeconds: 300, stillSeconds: 40_000)

    @Test func nothingSavedLoadsAsNone() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            #expect(try await sut.loadSchedulerMemory() == nil)
        }
    }

    @Test func savedMemorySurvivesCloseAndReopen() async throws {
        try await withTemporaryDirectory { dir in
            try await SQLitePositionQueue(path: queuePath(in: dir)).saveSchedulerMemory(memory, at: StoreFixture.start)
            let loaded = try await SQLitePositionQueue(path: queuePath(in: dir)).loadSchedulerMemory()
            #expect(loaded?.memory == memory)
            #expect(loaded?.savedAt == StoreFixture.start)
        }
    }

    @Test func aNewSaveReplacesTheOld() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            try await sut.saveSchedulerMemory(memory, at: StoreFixture.start)
            var later = memory
            later.badTimeSeconds = 7
            try await sut.saveSchedulerMemory(later, at: StoreFixture.start.addingTimeInterval(300))
            let loaded = try await sut.loadSchedulerMemory()
            #expect(loaded?.memory.badTimeSeconds == 7)
            #expect(loaded?.savedAt == StoreFixture.start.addingTimeInterval(300))
        }
    }

    @Test func aMemoryThatNoLongerDecodesLoadsAsNone() async throws {
        try await withTemporaryDirectory { dir in
            let sut = try SQLitePositionQueue(path: queuePath(in: dir))
            try await sut.pool.write { db in
                try db.execute(sql: "INSERT INTO scheduler_memory (id, saved_at, memory) VALUES (1, 0, '{\"not\": \"a memory\"}')")
            }
            #expect(try await sut.loadSchedulerMemory() == nil)
        }
    }

    @Test func aQueueFromBeforeTheMemoryTableIsMigrated() async throws {
        try await withTemporaryDirectory { dir in
            // A v1 database (positions only), as Tern before this version left it.
            let path = queuePath(in: dir)
            let old = try DatabaseQueue(path: path)
            try await old.write { db in
                try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v1')")
                try db.execute(sql: "CREATE TABLE positions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, time REAL NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, alt REAL, speed REAL, course REAL, quality INTEGER NOT NULL, satellites INTEGER, hdop REAL, accuracy REAL, enqueued_at REAL NOT NULL)")
            }
            try old.close()
            let sut = try SQLitePositionQueue(path: path)
            try await sut.saveSchedulerMemory(memory, at: StoreFixture.start)
            #expect(try await sut.loadSchedulerMemory()?.memory == memory)
        }
    }
}
