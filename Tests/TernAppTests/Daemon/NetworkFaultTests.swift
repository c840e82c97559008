import Foundation
import Testing
import TernCore
import TernSimulation
import TernStore
import TernTesting

/// `tern run` on the simulated board inside a network namespace, uploading across a veth pair to a
/// collector outside while the link goes down and up, 30 % of packets are dropped at random
/// (iptables statistic) and the link is throttled to 9600 bit/s (tc tbf): every stored position
/// arrives exactly once after id dedupe, and the daemon's memory stays bounded.
@Suite(.timeLimit(.minutes(5)), .serialized) struct NetworkFaultTests {
    static let binary = TernExecutable.url
    static let canRun = binary != nil && NetworkNamespace.canCreate
        && FileManager.default.isExecutableFile(atPath: "/usr/sbin/iptables-legacy")
        && FileManager.default.isExecutableFile(atPath: "/usr/sbin/tc")

    struct Outcome {
        var stored: Int64
        var unique: [WirePosition]
        var duplicates: Int
        var peakResidentKB: Int
        var exitStatus: Int32
        /// Still queued after the stop.
        var queued: [Int64]
    }

    /// Runs the daemon through the faults; returns what it stored and what arrived.
    private func run(protocol proto: String, path: String, index: Int) async throws -> Outcome {
        let ns = NetworkNamespace(index: index)
        try #require(ns.created)
        ns.setLink(up: true)
        let collector = Collector(host: ns.outsideAddress, logger: .quiet())
        try await collector.start()
        defer { Task { try? await collector.stop() } }
        let dir = NSTemporaryDirectory() + "tern-netfault-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = simulatedBoardConfig(device: "tern-netns", directory: dir, logLevel: "warning", extra: """
            [filter]
            thinning = "off"    # every position goes up: this test counts deliveries, not what thinning keeps
            [uplink]
            protocol = "\(proto)"
            url = "http://\(ns.outsideAddress):\(collector.port)\(path)"
            batch_size = 20
            timeout = "2s"
            connect_timeout = "1s"
            backoff_base = "100ms"
            backoff_max = "1s"
            """)
        try config.write(toFile: dir + "/tern.toml", atomically: true, encoding: .utf8)
        let (tool, arguments) = ns.wrap([try #require(Self.binary).path, "run", "--config", dir + "/tern.toml"])
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        var peak = 0
        func sample() { peak = max(peak, Self.residentKB(process.processIdentifier)) }
        func pause(_ seconds: Double) async throws {
            for _ in 0..<Int(seconds * 4) {
                try await Task.sleep(for: .milliseconds(250))
                sample()
            }
        }

        try await pause(3)
        ns.setLink(up: false)  // the default route goes with it, without a route message
        try await pause(3)
        ns.setLink(up: true)
        try await pause(2)
        for chain in ["OUTPUT -o", "INPUT -i"] {
            ns.run(["iptables-legacy", "-A"] + chain.split(separator: " ").map(String.init) + [ns.inside, "-m", "statistic", "--mode", "random", "--probability", "0.3", "-j", "DROP"])
        }
        try await pause(4)
        ns.run(["iptables-legacy", "-F"])
        NetworkNamespace.run("/usr/sbin/tc", ["qdisc", "add", "dev", ns.outside, "root", "tbf", "rate", "9600bit", "burst", "1600", "latency", "5s"])
        try await pause(3)
        NetworkNamespace.run("/usr/sbin/tc", ["qdisc", "del", "dev", ns.outside, "root"])

        // Let the backlog drain, then stop the daemon as systemd would.
        let queuePath = dir + "/queue.sqlite"
        for _ in 0..<80 where (try? QueueReader(path: queuePath).stats().depth) != 0 {
            try await pause(0.25)
        }
        process.interrupt()
        process.waitUntilExit()
        // A position accepted in the last second is written at shutdown and waits for the next run.
        let reader = try QueueReader(path: queuePath)
        let stats = try reader.stats()
        let snapshot = await collector.snapshot()
        #expect(stats.depth <= 1, "positions left in the queue: \(stats.depth)")
        return Outcome(
            stored: stats.lastSequence ?? 0, unique: snapshot.unique, duplicates: snapshot.duplicates, peakResidentKB: peak,
            exitStatus: process.terminationStatus, queued: try reader.positions(limit: 10).map(\.sequence))
    }

    /// VmRSS of a process, kB (0 once it is gone).
    static func residentKB(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        return status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }

    @Test(.enabled(if: canRun, "needs the tern executable, root, ip netns, iptables-legacy and tc"))
    func ternBatchesSurviveALinkDownRandomLossAndASlowLink() async throws {
        let sut = try await run(protocol: "tern", path: "/positions", index: 2)
        #expect(sut.exitStatus == 0)
        #expect(sut.stored > 10)
        #expect((sut.unique.map(\.seq) + sut.queued).sorted() == Array(1...sut.stored), "every stored position arrived or is still queued")
        #expect(sut.peakResidentKB < 200_000, "peak RSS \(sut.peakResidentKB) kB")
        print("tern over faults: \(sut.stored) stored, \(sut.unique.count) arrived once, \(sut.duplicates) duplicates, peak RSS \(sut.peakResidentKB) kB")
    }

    @Test(.enabled(if: canRun, "needs the tern executable, root, ip netns, iptables-legacy and tc"))
    func traccarPositionsSurviveTheSameFaultsAndArriveInOrder() async throws {
        let sut = try await run(protocol: "traccar", path: "/osmand", index: 3)
        #expect(sut.exitStatus == 0)
        #expect(sut.stored > 10)
        #expect(sut.unique.count + sut.queued.count == Int(sut.stored), "every stored position arrived once or is still queued")
        let times = sut.unique.map(\.time)
        #expect(times == times.sorted(), "Traccar needs them in order")
        #expect(sut.peakResidentKB < 200_000, "peak RSS \(sut.peakResidentKB) kB")
        print("traccar over faults: \(sut.stored) stored, \(sut.unique.count) arrived once, \(sut.duplicates) duplicates, peak RSS \(sut.peakResidentKB) kB")
    }
}
