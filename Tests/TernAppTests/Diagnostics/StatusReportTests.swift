import Foundation
import Testing
import TernApp
import TernCore
import TernGateway
import TernTesting

/// The report `tern run` publishes and `tern status` reads and prints.
@Suite struct StatusReportTests {
    private let now = Date(timeIntervalSince1970: 1_790_000_000)

    private func report(updatedAgo age: TimeInterval = 3, alwaysPowered: Bool = false) -> StatusReport {
        var gateway = GatewayStatus()
        gateway.uptimeSeconds = 4 * 3600
        gateway.receiverOnSeconds = 144
        gateway.powerCycles = 20
        gateway.fixesSeen = 30
        gateway.fixesAccepted = 20
        gateway.rejections = ["poorAccuracy": 2]
        gateway.lastAccepted = Fix.fixture(seconds: 0, accuracy: 4)
        var scheduler = FixScheduler(options: .init(
            policy: .adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900))))
        _ = scheduler.handle(.start(now: .zero))
        gateway.scheduler = scheduler.summary(now: .seconds(10))
        var uplink = ForwarderStatus()
        uplink.uploaded = 19
        return StatusReport(
            updated: now.addingTimeInterval(-age), started: now.addingTimeInterval(-4 * 3600), pid: 812, device: "pi-gps-01",
            receiverLink: "receiver connected", alwaysPowered: alwaysPowered, gateway: gateway, uplink: uplink, queueDepth: 1)
    }

    private func temporaryPath() -> String {
        NSTemporaryDirectory() + "tern-status-\(UUID().uuidString)/run/status.json"
    }

    @Test func aWrittenReportReadsBackTheSame() throws {
        let sut = StatusFile(path: temporaryPath())
        let written = report()
        try sut.write(written)  // creates the missing directories
        #expect(try sut.read() == written)
    }

    @Test func noFileReadsAsNoReport() throws {
        #expect(try StatusFile(path: temporaryPath()).read() == nil)
    }

    @Test func aRewriteReplacesTheWholeReport() throws {
        let sut = StatusFile(path: temporaryPath())
        try sut.write(report())
        var second = report(updatedAgo: 0)
        second.queueDepth = 7
        try sut.write(second)
        #expect(try sut.read()?.queueDepth == 7)
        let directory = (sut.path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["status.json"])
    }

    @Test func theJSONUsesSnakeCaseKeys() throws {
        let text = String(decoding: try report().json(), as: UTF8.self)
        #expect(text.contains("\"receiver_on_seconds\" : 144"))
        #expect(text.contains("\"queue_depth\" : 1"))
        #expect(!text.contains("next_wake"))
    }

    @Test func aFreshReportSaysRunningAndTheDutyCycle() {
        let lines = StatusText.lines(report(), now: now)
        #expect(lines.first == "daemon         running (pid 812), up 4 h 00 min; report 3 s old")
        #expect(lines.contains { $0.hasPrefix("receiver       off (receiver connected); powered 1.00 % of the time (2 min 24 s), 20 power-ons") })
        #expect(lines.contains { $0.hasPrefix("scheduler      adaptive 30 m, acquiring; no fix yet") })
        #expect(lines.contains("fixes          30 seen, 20 accepted, 2 rejected (poorAccuracy 2)"))
        #expect(lines.contains("uplink         idle; 19 uploaded, 1 waiting"))
    }

    @Test func aStaleReportSaysTheDaemonMayNotRun() {
        let lines = StatusText.lines(report(updatedAgo: 600), now: now)
        #expect(lines.first?.hasPrefix("daemon         NOT RUNNING? its last report is 10 min 0 s old (pid 812)") == true)
    }

    @Test func aReceiverWithoutPowerControlIsShownAlwaysPowered() {
        let lines = StatusText.lines(report(alwaysPowered: true), now: now)
        #expect(lines.contains { $0.hasPrefix("receiver       always powered (power.method = \"none\"") })
    }

    @Test(arguments: [(41.0, "41 s"), (432, "7 min 12 s"), (10_920, "3 h 02 min"), (187_200, "2 d 04 h")])
    func durationsReadLikeAPersonWritesThem(seconds: Double, text: String) {
        #expect(StatusText.duration(seconds) == text)
    }
}
