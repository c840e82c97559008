import Foundation
import Logging
import Synchronization
import Testing
import TernApp
import TernCore
import TernGateway
import TernStore
import TernTesting

/// `tern status`'s health and exit code, journald-friendly logs and `tern config check`.
@Suite(.timeLimit(.minutes(5))) struct StatusHealthTests {
    private let now = Date(timeIntervalSince1970: 1_795_600_000)

    private func report(age: TimeInterval = 5, link: String = ReceiverLinkState.connected.description, lastFixAgo: TimeInterval = 60) -> StatusReport {
        var gateway = GatewayStatus()
        gateway.uptimeSeconds = 7200
        var fix = Fix.fixture()
        fix.time = now.addingTimeInterval(-lastFixAgo)
        gateway.lastAccepted = fix
        return StatusReport(
            updated: now.addingTimeInterval(-age), started: now.addingTimeInterval(-7200), pid: 4242, device: "d", receiverLink: link,
            alwaysPowered: false, gateway: gateway, uplink: ForwarderStatus(), queueDepth: 0)
    }

    private func judge(_ report: StatusReport?, queue: QueueStats? = nil, alive: Bool = true) -> StatusHealth {
        StatusHealth.judge(report: report, queue: queue, now: now, processAlive: { _ in alive })
    }

    @Test func aFreshReportFromARunningDaemonIsHealthy() {
        #expect(judge(report()) == .healthy)
        #expect(judge(report()).exitCode == 0)
    }

    @Test func noReportIsNotRunning() {
        #expect(judge(nil).exitCode == 1)
    }

    @Test func aReportWhoseProcessIsGoneIsNotRunningAtOnce() {
        let sut = judge(report(age: 2), alive: false)
        #expect(sut.exitCode == 1)
        #expect(sut.problems.first?.contains("pid 4242") == true)
    }

    @Test func aReportOlderThanThirtySecondsIsStale() {
        #expect(judge(report(age: 45)).exitCode == 1)
    }

    @Test func aBlockedUplinkIsDegraded() {
        var blocked = report()
        blocked.uplink.blockedReason = "401"
        #expect(judge(blocked) == .degraded(problems: ["uplink blocked: 401"]))
        #expect(judge(blocked).exitCode == 3)
    }

    @Test func aSilentReceiverIsDegraded() {
        let link = ReceiverLinkState.silent(seconds: 12).description
        #expect(judge(report(link: link)) == .degraded(problems: [link]))
    }

    @Test func noFixForLongerThanTheLimitIsDegraded() {
        #expect(judge(report(lastFixAgo: 2 * 3600)).exitCode == 3)
    }

    @Test func aLongQueueIsDegraded() {
        let queue = QueueStats(depth: 20_000, oldestTime: now.addingTimeInterval(-60), lastSequence: 20_000)
        #expect(judge(report(), queue: queue).exitCode == 3)
    }

    @Test func theJSONDocumentHasItsSchemaAndConstellationsAsAnObject() throws {
        var fixReport = report()
        fixReport.gateway.lastAccepted?.inViewByConstellation = [.gps: 8, .galileo: 4]
        let sut = StatusDocument(health: .healthy, report: fixReport, queue: nil, now: now)
        let json = try #require(try JSONSerialization.jsonObject(with: sut.json()) as? [String: Any])
        #expect(json["schema"] as? Int == 1)
        #expect(json["stale"] as? Bool == false)
        #expect(json["last_fix_age_seconds"] as? Double == 60)
        let daemon = try #require(json["daemon"] as? [String: Any])
        let gateway = try #require(daemon["gateway"] as? [String: Any])
        let fix = try #require(gateway["last_accepted"] as? [String: Any])
        #expect(fix["in_view_by_constellation"] as? [String: Int] == ["gps": 8, "galileo": 4])
    }
}

@Suite(.timeLimit(.minutes(5))) struct ConsoleLogTests {
    @Test func levelsMapToSyslogPriorities() {
        #expect([Logger.Level.debug, .info, .notice, .warning, .error, .critical].map(JournalLogHandler.priority) == [7, 6, 5, 4, 3, 2])
    }

    @Test func aWarningReachesTheJournalWithPriorityFourAndNoTimestamp() {
        let lines = Mutex<[String]>([])
        var logger = Logger(label: "tern") { JournalLogHandler(label: $0, write: { line in lines.withLock { $0.append(line) } }) }
        logger.logLevel = .debug
        logger.warning("queue full", metadata: ["dropped": "3"])
        #expect(lines.withLock { $0 } == ["<4>tern: queue full dropped=3\n"])
    }

    @Test func journalStreamMustNameThisStderr() {
        #expect(!ConsoleLog.stderrIsJournal(environment: [:]))
        #expect(!ConsoleLog.stderrIsJournal(environment: ["JOURNAL_STREAM": "1:2"]))
    }

    @Test(.enabled(if: TernExecutable.url != nil, "the tern executable was not built beside the tests"))
    func aConfigErrorUnderSystemdCarriesAnErrorPriority() throws {
        let binary = try #require(TernExecutable.url)
        let errors = Pipe()
        var info = stat()
        #expect(fstat(errors.fileHandleForWriting.fileDescriptor, &info) == 0)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["run", "--config", "/nonexistent/tern.toml"]
        process.environment = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        try errors.fileHandleForWriting.close()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 78)
        #expect(text.hasPrefix("<3>tern: /nonexistent/tern.toml"), "\(text)")
    }

    @Test(.enabled(if: TernExecutable.url != nil, "the tern executable was not built beside the tests"))
    func configCheckSaysWarningsWithExitTwoAndErrorsWith78() async throws {
        let directory = NSTemporaryDirectory() + "tern-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let placeholder = directory + "/placeholder.toml", broken = directory + "/broken.toml"
        try "device = \"van-7\"\n[uplink]\nurl = \"https://tracker.example.com/positions\"\n".write(toFile: placeholder, atomically: true, encoding: .utf8)
        try "[uplink]\nbatch_size = 0\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let warned = try await TernExecutable.run(["config", "check", placeholder])
        #expect(warned.status == 2)
        #expect(warned.stdout.contains("placeholder"))
        let failed = try await TernExecutable.run(["config", "check", broken])
        #expect(failed.status == 78)
        #expect(failed.stderr.contains("uplink"))
    }

    @Test(.enabled(if: TernExecutable.url != nil, "the tern executable was not built beside the tests"))
    func configGateExitsThreeOnAPlaceholderAndZeroOnAConfiguredFile() async throws {
        let directory = NSTemporaryDirectory() + "tern-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let placeholder = directory + "/placeholder.toml", configured = directory + "/configured.toml"
        try "device = \"van-7\"\n[uplink]\nurl = \"https://tracker.example.com/positions\"\n".write(toFile: placeholder, atomically: true, encoding: .utf8)
        try "device = \"van-7\"\n[uplink]\nurl = \"https://gps.fleet.test/positions\"\n".write(toFile: configured, atomically: true, encoding: .utf8)
        let refused = try await TernExecutable.run(["config", "gate", placeholder])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("not started") && refused.stderr.contains("tracker.example.com"), "\(refused.stderr)")
        let passed = try await TernExecutable.run(["config", "gate", configured])
        #expect(passed.status == 0, "\(passed.stderr)")
    }
}
