import Foundation
import GRDB

/// The queue's schema, one migration per version. Migrations only add: queued positions are never
/// dropped by an upgrade (`SQLitePositionQueueUpgradeTests` opens a database of an earlier schema).
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // AUTOINCREMENT: `seq` is never reused, even after every row was acknowledged.
            try db.execute(sql: """
                CREATE TABLE positions (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT UNIQUE NOT NULL,
                    time REAL NOT NULL,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    alt REAL,
                    speed REAL,
                    course REAL,
                    quality INTEGER NOT NULL,
                    satellites INTEGER,
                    hdop REAL,
                    accuracy REAL,
                    enqueued_at REAL NOT NULL
                )
                """)
        }
        migrator.registerMigration("v2") { db in
            // One row: what the scheduler has learnt (FixScheduler.Memory as JSON), for restarts.
            try db.execute(sql: """
                CREATE TABLE scheduler_memory (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    saved_at REAL NOT NULL,
                    memory TEXT NOT NULL
                )
                """)
        }
        migrator.registerMigration("v3") { db in
            // Rows that would not decode, moved out of the way of the uploader: kept, counted, exportable.
            try db.execute(sql: """
                CREATE TABLE quarantine (
                    seq INTEGER PRIMARY KEY,
                    id TEXT, time REAL, lat REAL, lon REAL, alt REAL, speed REAL, course REAL,
                    quality INTEGER, satellites INTEGER, hdop REAL, accuracy REAL, enqueued_at REAL,
                    reason TEXT NOT NULL,
                    quarantined_at REAL NOT NULL
                )
                """)
            // Running totals that must survive restarts: positions dropped by the capacity rules, by rule.
            try db.execute(sql: "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        }
        migrator.registerMigration("v4") { db in
            // Damaged queues being salvaged into this one (`openRecovering`): the file (its name beside
            // the queue), how far it was copied, whether it is done. A salvage cut short (a crash, a
            // power cut, the memory limit) resumes from here at the next start.
            try db.execute(sql: """
                CREATE TABLE salvage (
                    source TEXT PRIMARY KEY,
                    copied_through INTEGER NOT NULL,
                    done INTEGER NOT NULL DEFAULT 0
                )
                """)
        }
        migrator.registerMigration("v5") { db in
            // This queue's identity, drawn once when the queue is created: part of every idempotency
            // key and of the `tern` protocol's batch, so a queue created afresh (a deleted file, a
            // salvage into a new file, a second board cloned from one image) never repeats another
            // queue's keys, though its sequence numbers may.
            try db.execute(sql: "CREATE TABLE identity (id INTEGER PRIMARY KEY CHECK (id = 1), queue_id TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO identity (id, queue_id) VALUES (1, ?)", arguments: [UUID().uuidString])
        }
        return migrator
    }
}
