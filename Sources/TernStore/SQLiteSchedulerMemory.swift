import Foundation
import GRDB
import TernCore

/// The scheduler's memory lives in the queue's database, one row (`scheduler_memory`), as JSON so
/// that fields can be added without a migration. A row that no longer decodes reads as none.
extension SQLitePositionQueue: SchedulerMemoryStore {
    public func loadSchedulerMemory() async throws -> (memory: FixScheduler.Memory, savedAt: Date)? {
        let saved = try await read { db -> (text: String, savedAt: Double)? in
            guard let row = try Row.fetchOne(db, sql: "SELECT saved_at, memory FROM scheduler_memory WHERE id = 1"),
                  let text: String = row["memory"], let savedAt: Double = row["saved_at"] else { return nil }
            return (text, savedAt)
        }
        guard let saved, let memory = try? JSONDecoder().decode(FixScheduler.Memory.self, from: Data(saved.text.utf8))
        else { return nil }
        return (memory, Date(timeIntervalSince1970: saved.savedAt))
    }

    public func saveSchedulerMemory(_ memory: FixScheduler.Memory, at time: Date) async throws {
        let text = String(decoding: try JSONEncoder().encode(memory), as: UTF8.self)
        try await write { db in
            try db.execute(
                sql: "INSERT INTO scheduler_memory (id, saved_at, memory) VALUES (1, ?, ?) "
                    + "ON CONFLICT(id) DO UPDATE SET saved_at = excluded.saved_at, memory = excluded.memory",
                arguments: [time.timeIntervalSince1970, text])
        }
    }
}
