import Foundation
import Testing
import TernCore
import TernTesting
@testable import TernStore

/// A full disk, for real: a 1 MiB tmpfs (needs root and mount; skipped with the reason otherwise).
@Suite(.timeLimit(.minutes(1)), .serialized) struct SQLitePositionQueueDiskFullTests {
    static let canMount = SmallFileSystem.canMount

    /// Positions queued, then the disk filled, then new positions until the disk refuses them.
    private func fillUp(_ sut: SQLitePositionQueue, _ fs: SmallFileSystem) async throws -> (stored: Int, failure: QueueError?, filler: URL) {
        var stored = try await sut.enqueue(contentsOf: StoreFixture.positions(300)).stored
        let filler = try fs.fill()
        var failure: QueueError?
        for batch in 1..<10_000 where failure == nil {
            do {
                stored += try await sut.enqueue(contentsOf: (0..<20).map { StoreFixture.position(second: batch * 1000 + $0) }).stored
            } catch let error as QueueError {
                failure = error
            }
        }
        return (stored, failure, filler)
    }

    @Test(.enabled(if: canMount, "needs root and mount(8) to make a size-limited tmpfs"))
    func aFullDiskRefusesNewPositionsWithATypedErrorAndKeepsTheQueued() async throws {
        let fs = try SmallFileSystem(bytes: 1 << 20)
        let path = fs.directory.appending(path: "queue.sqlite").path
        let sut = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 128 << 10), logger: .quiet())
        let (stored, failure, _) = try await fillUp(sut, fs)
        #expect(failure == .diskFull(path: path))
        #expect(sut.ballast.isHeld, "new positions must not use the ballast")
        #expect(try await sut.count() == stored)
    }

    @Test(.enabled(if: canMount, "needs root and mount(8) to make a size-limited tmpfs"))
    func onAFullDiskTheBallastLetsUploadsDrainTheQueueAndWritesResumeWhenSpaceReturns() async throws {
        let fs = try SmallFileSystem(bytes: 1 << 20)
        let path = fs.directory.appending(path: "queue.sqlite").path
        let sut = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 128 << 10), logger: .quiet())
        let (stored, _, filler) = try await fillUp(sut, fs)

        // Uploads go on: acknowledging (deleting) and checkpointing still work on the full disk.
        let half = try await sut.oldest(limit: stored / 2).last?.sequence ?? 0
        try await sut.acknowledge(through: half)
        #expect(try await sut.count() == stored - stored / 2)
        try await sut.maintain()
        try await sut.acknowledge(through: Int64.max)
        #expect(try await sut.count() == 0)

        // Space returns: writes resume by themselves and the ballast is taken back.
        try FileManager.default.removeItem(at: filler)
        _ = try await sut.enqueue(contentsOf: [StoreFixture.position(second: 1_000_000)])
        try await sut.maintain()
        #expect(sut.ballast.isHeld)
        #expect(try QueueReader(path: path).quickCheck() == ["ok"])
    }

    /// Why the ballast exists: the same scenario without one, and the acknowledgement cannot run.
    @Test(.enabled(if: canMount, "needs root and mount(8) to make a size-limited tmpfs"))
    func withoutABallastAFullDiskWedgesAcknowledgements() async throws {
        let fs = try SmallFileSystem(bytes: 1 << 20)
        let path = fs.directory.appending(path: "queue.sqlite").path
        let sut = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
        let (stored, _, _) = try await fillUp(sut, fs)
        await #expect(throws: QueueError.diskFull(path: path)) { try await sut.acknowledge(through: Int64(stored / 2)) }
    }
}
