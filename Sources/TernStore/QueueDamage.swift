import Foundation
import GRDB
import Logging
import TernCore

/// A queue found damaged while running: a read or a write reported SQLITE_CORRUPT or SQLITE_NOTADB.
/// The database is not repaired in place. The queue marks itself (`<path>.damaged`, holding the
/// reason: the next open salvages it even where `quick_check` would pass) and from then on keeps what
/// it is given in a spill file (`<path>.spill`, one JSON position per line, fsynced before `enqueue`
/// returns: stored as durably as a commit). The daemon sees `damage` and restarts; `openRecovering`
/// then moves the database aside, salvages it, and imports the spill into the new queue.
extension SQLitePositionQueue {
    static func damageMarker(_ path: String) -> String { path + ".damaged" }
    static func spillFile(_ path: String) -> String { path + ".spill" }

    /// Why the queue was found damaged while running, or nil.
    public var damage: String? { damaged.withLock { $0 } }

    /// Marks the queue damaged (once): the marker file, one critical log line.
    func noteDamage(_ reason: String) {
        let first = damaged.withLock { damaged in
            defer { if damaged == nil { damaged = reason } }
            return damaged == nil
        }
        guard first else { return }
        do {
            try writeFileSynced(Data((reason + "\n").utf8), to: Self.damageMarker(path), append: false)
        } catch {
            logger.error("cannot write the damage marker; the restart will check the queue itself", metadata: ["error": "\(error)"])
        }
        logger.critical(
            "the queue database turned corrupt while running: new positions go to a spill file; tern restarts to salvage it",
            metadata: ["path": "\(path)", "reason": "\(reason)"])
    }

    /// Appends `positions` to the spill file and fsyncs it.
    func spill(_ positions: [Position]) throws -> EnqueueResult {
        let encoder = JSONEncoder()
        var lines = Data()
        for position in positions {
            lines.append(try encoder.encode(position))
            lines.append(0x0A)
        }
        do {
            try writeFileSynced(lines, to: Self.spillFile(path), append: true)
        } catch {
            throw QueueError.notWritable(path: Self.spillFile(path), reason: "\(error)")
        }
        return EnqueueResult(stored: positions.count)
    }

    /// Imports a spill file left by a damaged queue (after its salvage: the spilled positions are
    /// the newest), then deletes it. A crash before the deletion imports it again: a position still
    /// queued is not stored twice (ids are unique); one already uploaded is sent again, and the server
    /// drops it by its id. A line that does not decode (a write torn by a power cut) is skipped.
    func importSpill(logger: Logger) throws -> Int {
        let file = Self.spillFile(path)
        guard let data = FileManager.default.contents(atPath: file) else { return 0 }
        let decoder = JSONDecoder()
        let positions = data.split(separator: 0x0A).compactMap { try? decoder.decode(Position.self, from: Data($0)) }
        let enqueuedAt = Date().timeIntervalSince1970
        for chunk in stride(from: 0, to: positions.count, by: Self.salvageChunk) {
            let part = positions[chunk..<min(chunk + Self.salvageChunk, positions.count)]
            try pool.write { db in
                let insert = try db.cachedStatement(sql: Self.insert)
                for position in part { _ = try PositionRow.insert(position, enqueuedAt: enqueuedAt, with: insert) }
            }
        }
        try FileManager.default.removeItem(atPath: file)
        logger.critical(
            "imported the positions a damaged queue had kept in its spill file", metadata: ["path": "\(path)", "imported": "\(positions.count)"])
        return positions.count
    }
}

/// Writes (or appends) `data` to `path` and fsyncs the file and its directory.
func writeFileSynced(_ data: Data, to path: String, append: Bool) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0o640)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    try data.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            offset += written
        }
    }
    guard fsync(fd) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directory >= 0 {
        _ = fsync(directory)
        close(directory)
    }
}
