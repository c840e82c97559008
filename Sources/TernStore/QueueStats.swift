import Foundation
import GRDB
import TernCore

/// A summary of the queue for status commands.
public struct QueueStats: Sendable, Hashable, Codable {
    /// Positions waiting to be uploaded.
    public var depth: Int
    /// Fix time of the oldest waiting position, if any.
    public var oldestTime: Date?
    /// The highest sequence number ever assigned (also after it was acknowledged), if any.
    public var lastSequence: Int64?
    /// Positions the capacity rules dropped or refused since the queue was created.
    public var dropped: QueueDrops
    /// Undecodable rows moved to the quarantine table, and how many are there now.
    public var quarantined: Int
    public var inQuarantine: Int

    public init(
        depth: Int, oldestTime: Date?, lastSequence: Int64?, dropped: QueueDrops = QueueDrops(), quarantined: Int = 0,
        inQuarantine: Int = 0
    ) {
        self.depth = depth
        self.oldestTime = oldestTime
        self.lastSequence = lastSequence
        self.dropped = dropped
        self.quarantined = quarantined
        self.inQuarantine = inQuarantine
    }

    /// Reads the summary in `db` (a read transaction; tables of later schemas are optional).
    static func read(_ db: Database) throws -> QueueStats {
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS depth, MIN(time) AS oldest FROM positions")
        let oldest = row.flatMap { Double.fromDatabaseValue($0["oldest"]) }
        let lastSequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'positions'")
        var counters: [String: Int] = [:]
        var inQuarantine = 0
        if try db.tableExists("counters") {
            for counter in try Row.fetchAll(db, sql: "SELECT name, value FROM counters") {
                if let name = String.fromDatabaseValue(counter["name"]), let value = Int.fromDatabaseValue(counter["value"]) {
                    counters[name] = value
                }
            }
            inQuarantine = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM quarantine") ?? 0
        }
        return QueueStats(
            depth: row.flatMap { Int.fromDatabaseValue($0["depth"]) } ?? 0,
            oldestTime: oldest.map { Date(timeIntervalSince1970: $0) },
            lastSequence: lastSequence,
            dropped: QueueDrops(
                oldest: counters["dropped_oldest", default: 0], thinned: counters["thinned", default: 0],
                rejectedNew: counters["rejected_new", default: 0], expired: counters["expired", default: 0]),
            quarantined: counters["quarantined", default: 0], inQuarantine: inQuarantine)
    }
}
