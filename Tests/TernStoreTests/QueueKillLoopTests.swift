import Foundation
import Testing
import TernCore
import TernSimulation
import TernTesting
@testable import TernStore

#if canImport(Glibc)
import Glibc
#endif

/// The real store-and-forward path (SQLitePositionQueue, Forwarder, HTTPUplink) in a child process
/// that takes positions and uploads them to a Collector in this process, SIGKILLed at random moments
/// again and again: while it opens, stores, sends, or acknowledges. After every kill the queue must
/// open sound, and every position reported stored must be queued or at the collector; after a last
/// clean drain, the collector must hold every sequence number the queue ever gave, 1…N, with no gap.
///
/// `TERN_CRASH_SEED=<n> swift test --filter QueueKillLoopTests` repeats a run's choices.
@Suite(.timeLimit(.minutes(5))) struct QueueKillLoopTests {
    static let kills = 200

    @Test(.enabled(if: QueueChild.url != nil, "tern-queue-child was not built"))
    func everyPositionReportedStoredReachesTheCollectorThroughRepeatedKills() async throws {
        let collector = Collector(logger: .quiet())
        try await collector.start()
        var report = KillLoop.Report()
        try await withTemporaryDirectory { dir in
            let sut = KillLoop(path: queuePath(in: dir), collector: collector, seed: QueueChild.seed)
            report = try await sut.run(kills: Self.kills)
        }
        try? await collector.stop()

        print("kill loop: \(report)")
        try #require(
            report.failure == nil,
            "\(report.failure ?? ""); missing: \(report.missingAfterKill) (TERN_CRASH_SEED=\(QueueChild.seed))")
        #expect(report.kills == Self.kills)
        #expect(report.childFailures.isEmpty, "calls that failed in the child: \(report.childFailures)")
        #expect(report.stored > 1000, "too few positions stored to mean anything")
        #expect(report.during["acknowledging", default: 0] > 0, "no kill landed during an acknowledgement")
        #expect(report.sequenceGaps.isEmpty, "sequence numbers the collector never received: \(report.sequenceGaps.prefix(20))")
        #expect(report.lastSequence > 0 && report.uniqueAtCollector == Int(report.lastSequence))
        #expect(report.storedNotAtCollector.isEmpty, "reported stored, never reached the collector: \(report.storedNotAtCollector)")
    }
}

/// Starts `tern-queue-child forward` and SIGKILLs it, over and over, on one queue, then drains it.
struct KillLoop {
    var path: String
    var collector: Collector
    var seed: UInt64

    struct Report: CustomStringConvertible {
        var kills = 0
        /// Where the kills landed (what the child was doing, from its last lines).
        var during: [String: Int] = [:]
        var stored = 0
        /// After some kill: reported stored, neither in the queue nor at the collector.
        var missingAfterKill: [UUID] = []
        /// After the final drain.
        var lastSequence: Int64 = 0
        var uniqueAtCollector = 0
        var duplicatesAtCollector = 0
        var requests = 0
        var sequenceGaps: [Int64] = []
        var storedNotAtCollector: [UUID] = []
        /// Calls that failed in a child (`failed` lines).
        var childFailures: [String] = []
        var seconds = 0.0
        var failure: String?

        var description: String {
            let places = during.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "\(kills) SIGKILLs (during \(places)); \(stored) positions reported stored; after the drain the collector holds "
                + "sequence 1…\(lastSequence) with \(sequenceGaps.count) gaps, \(uniqueAtCollector) unique positions, "
                + "\(duplicatesAtCollector) duplicates in \(requests) requests; \(missingAfterKill.count + storedNotAtCollector.count) lost; "
                + String(format: "%.1f s", seconds)
        }
    }

    func run(kills: Int) async throws -> Report {
        let started = ContinuousClock.now
        var report = Report()
        try await killRepeatedly(kills, into: &report)
        if report.failure == nil { try await drainAndCheck(into: &report) }
        report.seconds = (ContinuousClock.now - started) / .seconds(1)
        return report
    }

    private func killRepeatedly(_ kills: Int, into report: inout Report) async throws {
        guard let child = QueueChild.url else { throw CancellationError() }
        var random = SplitMix64(seed: seed)
        var stored: Set<UUID> = []
        for round in 0..<kills {
            // One kill in five counts from the start (the process loading, the queue opening and
            // recovering); the others from the moment the forwarder runs.
            let fromStart = round % 5 == 0
            let delay = fromStart ? Int.random(in: 1...40, using: &random) : Int.random(in: 5...60, using: &random)
            let arguments = ["forward", "--path", path, "--url", collector.url.absoluteString, "--seed", "\(random.next())"]
            let result = try await ChildProcess.offload {
                let process = try ChildProcess(executable: child, arguments: arguments)
                if !fromStart, process.waitForLine(timeout: .seconds(20), where: { $0 == QueueChild.Line.ready.description }) == nil {
                    return process.finish()
                }
                Thread.sleep(forTimeInterval: Double(delay) / 1000)
                process.kill(SIGKILL)
                return process.finish()
            }
            guard result.termination == .signalled(SIGKILL) else {
                report.failure = "round \(round): tern-queue-child \(arguments.joined(separator: " ")) \(result.termination) before the kill: \(result.stderr)"
                return
            }
            report.kills += 1
            let lines = result.lines.compactMap(QueueChild.Line.init)
            report.during[Self.activity(at: lines), default: 0] += 1
            for case let .stored(id) in lines {
                stored.insert(id)
                report.stored += 1
            }
            for case let .failed(reason) in lines { report.childFailures.append("round \(round): \(reason)") }

            let queued: Set<UUID>
            do {
                queued = Set(try await QueueCheck.reopen(path).map(\.position.id))
            } catch {
                report.failure = "round \(round), after a kill \(delay) ms after \(fromStart ? "the start" : "ready"): \(error)"
                return
            }
            let received = Set(await collector.snapshot().unique.map(\.id))
            let missing = stored.subtracting(queued).subtracting(received)
            if !missing.isEmpty {
                report.missingAfterKill += missing
                report.failure = "round \(round): \(missing.count) positions reported stored are neither queued nor at the collector"
                return
            }
        }
        report.storedNotAtCollector = Array(stored)
    }

    /// A clean drain, then the collector must hold sequence 1…N (N the queue's last) and every stored id.
    private func drainAndCheck(into report: inout Report) async throws {
        guard let child = QueueChild.url else { throw CancellationError() }
        let arguments = ["drain", "--path", path, "--url", collector.url.absoluteString]
        let drain = try await ChildProcess.offload { try ChildProcess(executable: child, arguments: arguments).finish() }
        guard drain.termination == .exited(0) else {
            report.failure = "tern-queue-child \(arguments.joined(separator: " ")) \(drain.termination): \(drain.lines.suffix(3)) \(drain.stderr)"
            return
        }
        let queue = try SQLitePositionQueue(path: path, logger: .quiet())
        let stats = try await queue.stats()
        try queue.pool.close()
        guard stats.depth == 0 else {
            report.failure = "\(stats.depth) positions still queued after the drain"
            return
        }
        let snapshot = await collector.snapshot()
        report.lastSequence = stats.lastSequence ?? 0
        report.uniqueAtCollector = snapshot.unique.count
        report.duplicatesAtCollector = snapshot.duplicates
        report.requests = snapshot.requests
        let sequences = Set(snapshot.unique.map(\.seq))
        report.sequenceGaps = report.lastSequence < 1 ? [] : (1...report.lastSequence).filter { !sequences.contains($0) }
        let received = Set(snapshot.unique.map(\.id))
        report.storedNotAtCollector = report.storedNotAtCollector.filter { !received.contains($0) }
    }

    /// What the child was doing when it was killed, from the last lines it printed.
    static func activity(at lines: [QueueChild.Line]) -> String {
        guard lines.contains(.ready) else { return "starting" }
        for line in lines.reversed() {
            switch line {
            case .acknowledging: return "acknowledging"
            case .acknowledged: return "reading the next batch or idle"
            case .sending: return "sending"
            case .sent(delivered: true): return "delivered, not yet acknowledged"
            case .sent(delivered: false): return "backing off"
            default: continue
            }
        }
        return "storing, before the first upload"
    }
}
