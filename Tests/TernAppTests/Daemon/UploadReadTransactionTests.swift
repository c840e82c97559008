import Foundation
import GRDB
import Synchronization
import Testing
import TernCore
import TernGateway
import TernTesting
@testable import TernStore

/// The uploader reads a batch in a short read transaction and sends it afterwards: while a request
/// hangs on a dead network, nothing keeps the WAL from being checkpointed and truncated (a read
/// transaction held across the request would pin it and let it grow without bound).
@Suite(.timeLimit(.minutes(5))) struct UploadReadTransactionTests {
    /// An uplink whose request hangs until released.
    final class HangingUplink: Uplink {
        private let state = Mutex<(sending: Bool, release: CheckedContinuation<Void, Never>?)>((false, nil))

        var isSending: Bool { state.withLock { $0.sending } }

        func send(_ batch: [QueuedPosition]) async -> UplinkResult {
            await withCheckedContinuation { continuation in
                state.withLock { $0 = (true, continuation) }
            }
            return .delivered
        }

        func release() { state.withLock { s in s.release?.resume(); s.release = nil } }
    }

    @Test func theWALCanBeTruncatedWhileAnUploadIsInFlight() async throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "tern-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appending(path: "queue.sqlite").path
        do {
            let queue = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
            _ = try await queue.enqueue(contentsOf: (0..<50).map { Position.fixture(seconds: Double($0)) })
            let uplink = HangingUplink()
            let sut = Forwarder(queue: queue, uplink: uplink, clock: ContinuousClock(), logger: .quiet())
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sut.run() }
                #expect(await eventually { uplink.isSending })
                // TRUNCATE waits for every reader to finish; a reader left open would make it fail (SQLITE_BUSY).
                try await queue.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
                let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
                #expect(wal == 0)
                uplink.release()
                #expect(await eventually { (try? await queue.count()) == 0 })
                group.cancelAll()
            }
        }
    }
}
