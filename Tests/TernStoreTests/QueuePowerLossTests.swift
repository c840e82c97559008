import Foundation
import GRDB
import Testing
import TernCore
import TernTesting
@testable import TernStore

/// Power cuts, simulated as SQLite's own crash tests do (Tests/CTernCrashVFS): a child process
/// enqueues through a VFS that keeps unsynced writes in memory and ends the process at a random
/// write or sync, leaving on disk what a power cut would (with torn writes half of the time). After
/// each cut this process reopens the queue with the ordinary VFS and checks it is sound and holds
/// every position the child reported stored. The same files take every cut, one after the other.
///
/// `TERN_CRASH_SEED=<n> swift test --filter QueuePowerLossTests` repeats a run.
@Suite(.timeLimit(.minutes(5))) struct QueuePowerLossTests {
    static let seed = QueueChild.seed

    @Test(.enabled(if: QueueChild.url != nil, "tern-queue-child was not built"), arguments: [PowerCutHarness.Commit.single, .group])
    func everyPositionReportedStoredSurvivesPowerCutsWithSynchronousFull(_ commit: PowerCutHarness.Commit) async throws {
        try await withTemporaryDirectory { dir in
            let sut = PowerCutHarness(synchronous: "full", commit: commit, cuts: 48, seed: Self.seed &+ commit.salt)

            let report = try await sut.run(path: queuePath(in: dir))

            print("power cuts, synchronous FULL, \(commit) commits: \(report)")
            try #require(report.failure == nil, "\(report.failure ?? "") (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.cuts == 48)
            #expect(report.stored > 100, "too few positions stored to mean anything (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.lost.isEmpty, "positions reported stored but missing after a power cut: \(report.lost) (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.sequenceWentBack.isEmpty, "sequence numbers went back across cuts: \(report.sequenceWentBack) (TERN_CRASH_SEED=\(Self.seed))")
        }
    }

    /// Acknowledgements are not fsynced (a delete lost to a power cut only sends a position again, which
    /// the server drops by its id): interleaved with the stores, they must not cost a stored position.
    @Test(.enabled(if: QueueChild.url != nil, "tern-queue-child was not built"))
    func unsyncedAcknowledgementsCostNoStoredPositionInPowerCuts() async throws {
        try await withTemporaryDirectory { dir in
            var sut = PowerCutHarness(synchronous: "full", commit: .single, cuts: 48, seed: Self.seed &+ 7)
            sut.acknowledgeEvery = 2

            let report = try await sut.run(path: queuePath(in: dir))

            print("power cuts, synchronous FULL, acknowledgements between the commits: \(report)")
            try #require(report.failure == nil, "\(report.failure ?? "") (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.cuts == 48)
            #expect(report.released > 20, "too few acknowledgements to mean anything (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.lost.isEmpty, "positions reported stored but missing after a power cut: \(report.lost) (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.sequenceWentBack.isEmpty, "sequence numbers went back across cuts: \(report.sequenceWentBack) (TERN_CRASH_SEED=\(Self.seed))")
        }
    }

    /// The negative control: with `synchronous = NORMAL` a WAL commit is not fsynced, so a power cut
    /// loses stored positions. If this harness saw none, it would not be simulating power cuts.
    @Test(.enabled(if: QueueChild.url != nil, "tern-queue-child was not built"), arguments: [PowerCutHarness.Commit.single, .group])
    func theHarnessSeesStoredPositionsLostWithSynchronousNormal(_ commit: PowerCutHarness.Commit) async throws {
        try await withTemporaryDirectory { dir in
            let sut = PowerCutHarness(synchronous: "normal", commit: commit, cuts: 16, seed: Self.seed &+ commit.salt &+ 1)

            let report = try await sut.run(path: queuePath(in: dir))

            print("power cuts, synchronous NORMAL (control), \(commit) commits: \(report)")
            try #require(report.failure == nil, "\(report.failure ?? "") (TERN_CRASH_SEED=\(Self.seed))")
            #expect(report.cuts == 16)
            #expect(!report.lost.isEmpty, "no stored position lost without fsync: the crash VFS does not cut the power (TERN_CRASH_SEED=\(Self.seed))")
        }
    }
}

extension QueuePowerLossTests {
    /// Creating the queue (the database, WAL mode, the schema) is cut at each of its writes and
    /// syncs in turn, on fresh files: the queue must then open, and take positions.
    @Test(.enabled(if: QueueChild.url != nil, "tern-queue-child was not built"))
    func aPowerCutWhileTheQueueIsBeingCreatedLeavesOneThatOpens() async throws {
        guard let child = QueueChild.url else { return }
        let creation = try await withTemporaryDirectoryResult { dir in
            try await ChildProcess.offload {
                try ChildProcess(executable: child, arguments: ["enqueue", "--path", queuePath(in: dir), "--limit", "0"]).finish()
            }
        }
        guard case let .opened(operations)? = creation.lines.first.flatMap(QueueChild.Line.init) else {
            Issue.record("tern-queue-child printed no `opened` line: \(creation.termination), \(creation.stderr)")
            return
        }
        var random = SplitMix64(seed: Self.seed)
        for cutAt in 1...operations {
            let tear = Bool.random(using: &random)
            try await withTemporaryDirectory { dir in
                let path = queuePath(in: dir)
                let arguments = ["enqueue", "--path", path, "--crash-after", "\(cutAt)", "--seed", "\(random.next())"] + (tear ? ["--tear"] : [])
                let cut = try await ChildProcess.offload { try ChildProcess(executable: child, arguments: arguments).finish() }
                try #require(cut.termination == .exited(QueueChild.powerCutStatus), "\(cut.termination): \(cut.stderr)")

                #expect(try await QueueCheck.reopen(path).isEmpty, "cut at \(cutAt) of \(operations)")
                let sut = try SQLitePositionQueue(path: path, logger: .quiet())
                defer { try? sut.pool.close() }
                #expect(try await sut.enqueue(StoreFixture.position()) == 1)
            }
        }
        print("power cuts while creating the queue: at each of its \(operations) writes and syncs, then opened and took a position")
    }
}

/// A fresh directory under the system temp dir, removed when `body` returns.
private func withTemporaryDirectoryResult<T>(_ body: (URL) async throws -> T) async throws -> T {
    var result: T?
    try await withTemporaryDirectory { result = try await body($0) }
    return result!
}

/// Runs `tern-queue-child enqueue` under the crash VFS `cuts` times on one queue, checking it after each cut.
struct PowerCutHarness {
    enum Commit: String, Sendable, CustomStringConvertible {
        case single, group

        var description: String { rawValue == "single" ? "single-row" : "group" }
        var salt: UInt64 { self == .single ? 0 : 1_000_003 }
    }

    /// What the cuts did.
    struct Report: CustomStringConvertible {
        var cuts = 0
        var torn = 0
        /// Cuts before the queue had opened (creating or recovering it).
        var duringOpen = 0
        /// Where the power went: "write wal", "sync wal", "write db", "sync db", …
        var at: [String: Int] = [:]
        /// Positions the child reported stored.
        var stored = 0
        /// Acknowledged (deleted) by the child: no longer expected.
        var released = 0
        /// Reported stored, missing afterwards.
        var lost: [UUID] = []
        /// In the queue though never reported stored: the cut came after the commit reached the disk
        /// and before the child could print.
        var unreportedButKept = 0
        var seconds = 0.0
        /// Cuts after which the queue's last sequence number was below one it had given before.
        var sequenceWentBack: [String] = []
        /// Why the run stopped early (the child failed, the queue did not open clean).
        var failure: String?

        var description: String {
            let places = at.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "\(cuts) cuts (\(torn) torn, \(duringOpen) while opening; at \(places)), \(stored) positions reported stored, "
                + "\(lost.count) lost, \(unreportedButKept) kept unreported, \(String(format: "%.1f", seconds)) s"
        }
    }

    var synchronous: String
    var commit: Commit
    var cuts: Int
    var seed: UInt64
    /// The child acknowledges its oldest position after every this many commits (0: never).
    var acknowledgeEvery = 0
    /// Where a cut falls, picked for each child: the n-th write or sync (n up to `any`), the n-th
    /// sync (commits and checkpoints being made durable), or the n-th write or sync of the database
    /// file (checkpoints, every 10 commits). Each range spans a few dozen commits.
    var maxOperations: [(cutOn: String, upTo: Int64)] = [("any", 400), ("sync", 50), ("database", 30)]

    func run(path: String) async throws -> Report {
        let started = ContinuousClock.now
        var report = Report()
        try await cut(path: path, into: &report)
        report.seconds = (ContinuousClock.now - started) / .seconds(1)
        return report
    }

    private func cut(path: String, into report: inout Report) async throws {
        guard let child = QueueChild.url else { throw CancellationError() }
        var random = SplitMix64(seed: seed)
        var expected: Set<UUID> = []
        var reported: Set<UUID> = []
        var highestSequence: Int64 = 0
        for _ in 0..<cuts {
            let (cutOn, upTo) = maxOperations[Int.random(in: 0..<maxOperations.count, using: &random)]
            let crashAfter = Int64.random(in: 1...upTo, using: &random)
            let tear = Bool.random(using: &random)
            let arguments = [
                "enqueue", "--path", path, "--synchronous", synchronous, "--commit", commit.rawValue,
                "--cut-on", cutOn, "--crash-after", "\(crashAfter)", "--seed", "\(random.next())", "--maintain-every", "10",
            ] + (tear ? ["--tear"] : []) + (acknowledgeEvery > 0 ? ["--acknowledge-every", "\(acknowledgeEvery)"] : [])
            let command = "tern-queue-child " + arguments.joined(separator: " ")
            let result = try await ChildProcess.offload { try ChildProcess(executable: child, arguments: arguments).finish() }
            guard result.termination == .exited(QueueChild.powerCutStatus), let place = Self.cutPlace(result.stderr) else {
                report.failure = "\(command) \(result.termination), not by a power cut: \(result.stderr)"
                return
            }
            report.cuts += 1
            report.torn += tear ? 1 : 0
            report.at[place, default: 0] += 1
            let lines = result.lines.compactMap(QueueChild.Line.init)
            if !lines.contains(where: { if case .opened = $0 { true } else { false } }) { report.duringOpen += 1 }
            for line in lines {
                switch line {
                case let .stored(id):
                    expected.insert(id)
                    reported.insert(id)
                    report.stored += 1
                case let .releasing(id):
                    expected.remove(id)
                    report.released += 1
                default: break
                }
            }

            let queued: Set<UUID>
            do {
                let (positions, lastSequence) = try await QueueCheck.reopenWithSequence(path)
                queued = Set(positions.map(\.position.id))
                let highest = max(highestSequence, positions.map(\.sequence).max() ?? 0)
                if lastSequence < highest { report.sequenceWentBack.append("after cut \(report.cuts): \(lastSequence) < \(highest)") }
                highestSequence = max(highest, lastSequence)
            } catch {
                report.failure = "after cut \(report.cuts) (\(command)): \(error)"
                return
            }
            let missing = expected.subtracting(queued)
            report.lost += missing.sorted { $0.uuidString < $1.uuidString }
            expected.subtract(missing)
            report.unreportedButKept = queued.subtracting(reported).count
        }
    }

    /// "write wal", "sync db", … from the crash VFS's last words.
    static func cutPlace(_ stderr: String) -> String? {
        guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("ctern-crash-vfs: power cut") }),
              let open = line.firstIndex(of: "("), let close = line[open...].firstIndex(of: ")")
        else { return nil }
        let words = line[line.index(after: open)..<close].split(separator: " ")
        guard words.count == 2 else { return nil }
        let file = words[1].hasSuffix("-wal") ? "wal" : words[1].hasSuffix("-journal") ? "journal" : "db"
        return "\(words[0]) \(file)"
    }
}
