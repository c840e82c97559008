import Clocks
import Foundation
import Testing
import TernCore
import TernGateway
import TernStore
import TernTesting

/// The gateway on the real SQLite queue when the disk is full: accepted positions wait in memory, and
/// a shutdown (SIGTERM) writes them once there is room. Nothing accepted is lost.
@Suite(.timeLimit(.minutes(5))) struct GatewayStoreFailureTests {
    @Test(.enabled(if: SmallFileSystem.canMount, "needs root and mount(8) to make a size-limited tmpfs"))
    func positionsAcceptedWhileTheDiskIsFullAreWrittenAtShutdownOnceThereIsRoom() async throws {
        let fs = try SmallFileSystem(bytes: 1 << 20)
        let path = fs.directory.appending(path: "queue.sqlite").path
        let queue = try SQLitePositionQueue(path: path, options: .init(ballastBytes: 0), logger: .quiet())
        let filler = try fs.fill()
        let receiver = FakeReceiver()
        let clock = TestClock()
        // No warm-up, no thinning and no commit window, unlike the shipped configuration: every fix is to
        // be stored, and each write is tried (and fails on the full disk) as soon as its fix is accepted.
        let sut = Gateway(
            configuration: GatewayCore.Configuration(
                scheduler: .init(policy: .alwaysOn), filter: .init(warmUp: .zero, thinning: nil), commitWindow: .immediate),
            receiver: receiver, queue: queue, forwarder: SpyForwarder(), clock: clock, logger: .quiet())

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sut.run() }
            for second in 0..<5 {
                receiver.emit(.fixture(seconds: Double(second)))
                #expect(await eventually { await sut.status().fixesAccepted == second + 1 })
            }
            #expect(await eventually { await sut.status().pendingWrites == 5 })
            #expect(try await queue.count() == 0)
            try FileManager.default.removeItem(at: filler)
            group.cancelAll()  // what SIGTERM does, through the service group
        }

        let stored = try await queue.oldest(limit: 10).map(\.position.fix.time)
        #expect(stored == (0..<5).map { Fix.fixture(seconds: Double($0)).time })
        #expect(await sut.status().pendingWrites == 0)
    }
}
