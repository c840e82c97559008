import GRDB

/// The queue's schema, one migration per version.
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
        return migrator
    }
}
