import Foundation
import Testing
import TernApp
import TernCore
import TernSimulation
import TernTesting

@testable import tern

/// `tern simulate`'s argument checks (pure).
@Suite struct SimulationRequestTests {
    private func request(
        trace: String? = "t.gpx", scenario: String? = nil, _ policy: SimulationPolicyName, interval: Duration? = nil,
        errorBudget: String? = nil, maxInterval: Duration? = nil, minInterval: Duration? = nil
    ) throws -> SimulationRequest {
        try SimulationRequest(
            trace: trace, scenario: scenario, policy: policy, interval: interval, errorBudget: errorBudget,
            maxInterval: maxInterval, minInterval: minInterval, receiver: .mt3339)
    }

    private func message(_ body: () throws -> SimulationRequest) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test func restartsReachTheSimulationOptions() throws {
        let sut = try Tern.Simulate.parse(["--scenario", "parked-day", "--policy", "adaptive", "--receiver", "mt3339",
                                            "--restart-at", "12h", "--restart-at", "90m", "--forget-on-restart"]).request()
        let options = sut.options(noSky: [])
        #expect(options.restarts == [43_200, 5400])
        #expect(!options.remembers)
    }

    /// A configuration the daemon would read: a u-blox receiver, a fixed 45 s policy, its own filter.
    private static let config = """
        [receiver]
        device = "/dev/serial0"
        model = "ublox-m8"

        [scheduler]
        policy = "fixed"
        interval = "45s"
        acquisition_timeout = "60s"

        [filter]
        max_accuracy_m = 20
        warm_up = "0s"

        [uplink]
        url = "https://tracker.example.com/positions"
        """

    @Test func aConfigurationSetsThePolicyTheFilterAndTheReceiverAsTheDaemonReadsThem() throws {
        let config = try TernConfig.parse(Self.config)
        let sut = try Tern.Simulate.parse(["--scenario", "parked-day", "--config", "tern.toml"]).request()
            .configured(by: config, path: "tern.toml")
        let options = sut.options(noSky: [])
        #expect(sut.policy == .fixed(interval: .seconds(45)))
        #expect(sut.receiver == .ubloxM8)
        #expect(options.filter == config.filter)
        #expect(options.acquisitionTimeout == .seconds(60))
        #expect(sut.schedulerOptions(options) == config.scheduler)
    }

    @Test func aReceiverGivenBesideTheConfigurationIsTheOneSimulated() throws {
        let sut = try Tern.Simulate.parse(["--scenario", "parked-day", "--config", "tern.toml", "--receiver", "mt3339"]).request()
            .configured(by: try TernConfig.parse(Self.config), path: "tern.toml")
        #expect(sut.receiver == .mt3339)
        #expect(sut.schedulerOptions(sut.options(noSky: [])).energy == ReceiverModel.mt3339.energy)
    }

    @Test func aPolicyBesideTheConfigurationIsRejectedNamingBoth() {
        let error = message { try Tern.Simulate.parse(["--scenario", "parked-day", "--config", "tern.toml", "--policy", "fixed"]).request() }
        #expect(error?.contains("--policy and --config exclude each other") == true)
    }

    @Test func withoutAConfigurationThePolicyIsRequired() {
        let error = message { try Tern.Simulate.parse(["--scenario", "parked-day", "--receiver", "mt3339"]).request() }
        #expect(error?.contains("give --policy") == true)
    }

    @Test func fixedDefaultsToOneMinute() throws {
        let sut = try request(.fixed)
        #expect(sut.policy == .fixed(interval: .seconds(60)))
    }

    @Test func adaptiveDefaultsTo30MetresAnd5sTo15m() throws {
        let sut = try request(.adaptive)
        #expect(sut.policy == .adaptive(errorBudget: 30, minInterval: .seconds(5), maxInterval: .seconds(900)))
    }

    @Test func adaptiveTakesBudgetAndBounds() throws {
        let sut = try request(.adaptive, errorBudget: "50m", maxInterval: .seconds(600), minInterval: .seconds(2))
        #expect(sut.policy == .adaptive(errorBudget: 50, minInterval: .seconds(2), maxInterval: .seconds(600)))
    }

    @Test func scenarioReplacesTrace() throws {
        let sut = try request(trace: nil, scenario: "parked-day", .alwaysOn)
        #expect(sut.source == .scenario("parked-day"))
    }

    @Test func intervalWithAdaptiveIsRejected() {
        #expect(message { try request(.adaptive, interval: .seconds(30)) }?.contains("--interval does not apply to --policy adaptive") == true)
    }

    @Test func budgetWithFixedIsRejected() {
        #expect(message { try request(.fixed, errorBudget: "30m") }?.contains("--error-budget does not apply to --policy fixed") == true)
    }

    @Test func intervalWithAlwaysOnIsRejected() {
        #expect(message { try request(.alwaysOn, interval: .seconds(30)) }?.contains("--interval does not apply") == true)
    }

    @Test func zeroIntervalIsRejected() {
        #expect(message { try request(.fixed, interval: .zero) }?.contains("--interval must be positive") == true)
    }

    @Test func maxBelowMinIsRejected() {
        #expect(message { try request(.adaptive, maxInterval: .seconds(2), minInterval: .seconds(10)) }?.contains("--max-interval (2s) must be at least") == true)
    }

    @Test func traceAndScenarioTogetherAreRejected() {
        #expect(message { try request(scenario: "commute", .fixed) }?.contains("exclude each other") == true)
    }

    @Test func neitherTraceNorScenarioIsRejected() {
        #expect(message { try request(trace: nil, .fixed) }?.contains("--trace FILE") == true)
    }

    @Test func unknownScenarioListsTheNames() {
        #expect(message { try request(trace: nil, scenario: "mars", .fixed) }?.contains("commute, parked-day, parked-3-days, indoor") == true)
    }

    @Test(arguments: [("30m", 30.0), ("30", 30), ("0.5km", 500), (" 12.5m ", 12.5)])
    func budgetParsesMetres(text: String, metres: Double) throws {
        #expect(try SimulationRequest.metres(text) == metres)
    }

    @Test(arguments: ["30 metres", "-5m", "0", "thirty", "nanm"])
    func badBudgetIsRejected(text: String) {
        #expect(throws: (any Error).self) { try SimulationRequest.metres(text) }
    }

    @Test func timestampsAreISO8601UTCWithMilliseconds() {
        #expect(SimulationOutput.timestamp(Date(timeIntervalSince1970: 1_772_436_600.25)) == "2026-03-02T07:30:00.250Z")
        #expect(SimulationOutput.timestamp(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
    }
}

/// `tern simulate` end to end, through the built binary.
@Suite(.timeLimit(.minutes(5))) struct SimulateCommandTests {
    static let binary = TernExecutable.url

    private func run(_ arguments: [String]) throws -> TernExecutable.Result {
        try TernExecutable.run(["simulate"] + arguments)
    }

    private func temporaryPath(_ name: String) throws -> String {
        let directory = NSTemporaryDirectory() + "tern-simulate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/" + name
    }

    /// Rows of a CSV file without its header.
    private func rows(_ path: String) throws -> [[String]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func jsonHasTheFigures() throws {
        let result = try run(["--scenario", "commute", "--policy", "fixed", "--interval", "60s", "--receiver", "mt3339", "--json"])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        for key in [
            "receiver_on_s", "energy_mj", "fixes_attempted", "fixes_accepted", "starts", "error_m", "energy_per_fix_mj",
            "floor_mj", "floor_ratio",
        ] {
            #expect(object[key] != nil, "missing \(key)")
        }
        let errors = try #require(object["error_m"] as? [String: Double])
        #expect(Set(errors.keys) == ["p50", "p95", "max"])
        #expect(object["fixes_accepted"] as? Int ?? 0 > 50)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func theShippedProfileSimulatesAsTheDefaultsDo() throws {
        // board/simulated.toml sets every [scheduler] and [filter] key to its default, on an MT3339.
        let profile = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../../board/simulated.toml").path
        let configured = try run(["--scenario", "commute", "--config", profile, "--json"])
        let defaults = try run(["--scenario", "commute", "--policy", "adaptive", "--receiver", "mt3339", "--json"])
        #expect(configured.status == 0 && defaults.status == 0)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(configured.stdout.utf8)) as? [String: Any])
        #expect(object.removeValue(forKey: "config") as? String == profile)
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(defaults.stdout.utf8)) as? [String: Any])
        #expect(NSDictionary(dictionary: object).isEqual(to: expected))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func anUnreadableConfigurationExitsOneNamingTheKey() throws {
        let path = try temporaryPath("tern.toml")
        try "[scheduler]\npolicy = \"sometimes\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try run(["--scenario", "commute", "--config", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("scheduler.policy"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func powerLogRecomputesTheEnergy() throws {
        let log = try temporaryPath("power.csv")
        let result = try run([
            "--scenario", "commute", "--policy", "fixed", "--interval", "2m", "--receiver", "mt3339", "--json", "--power-log", log,
        ])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let reported = try #require(object["energy_mj"] as? Double)
        let end = try #require(object["duration_s"] as? Double)
        // MT3339 by hand: 3.3 V; off 0.007 mA, acquiring 25 mA, tracking 20 mA; 40 mA inrush for 1 s after power-on.
        let current = ["off": 0.007, "acquiring": 25.0, "tracking": 20.0, "standby": 2.0]
        let entries = try rows(log).map { (time: try #require(Double($0[0])), state: $0[1]) }
        var milliampereSeconds = 0.0
        var poweredAt: Double?
        var state = "off", since = 0.0
        for (time, next) in entries + [(end, "off")] {
            let amps = try #require(current[state])
            milliampereSeconds += amps * (time - since)
            if let on = poweredAt { milliampereSeconds += (40 - amps) * max(0, min(time, on + 1) - max(since, on)) }
            if state == "off", next != "off" { poweredAt = time } else if next == "off" { poweredAt = nil }
            state = next
            since = time
        }
        #expect(abs(milliampereSeconds * 3.3 - reported) < 0.01 * reported)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func fixesOutListsTheAcceptedFixes() throws {
        let fixes = try temporaryPath("fixes.csv")
        let result = try run([
            "--scenario", "indoor", "--policy", "always-on", "--receiver", "ublox-m8", "--json", "--fixes-out", fixes,
        ])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let rows = try rows(fixes)
        #expect(try String(contentsOfFile: fixes, encoding: .utf8).hasPrefix("time,lat,lon,accuracy_m\n"))
        #expect(rows.count == object["fixes_accepted"] as? Int)
        #expect(rows.first?.first?.hasPrefix("2026-03-02T07:") == true)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func summaryIsHumanReadable() throws {
        let result = try run(["--scenario", "commute", "--policy", "adaptive", "--receiver", "mt3339"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Simulated commute (1.0 h, "))
        #expect(result.stdout.contains("energy"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func gpxTraceRuns() throws {
        let path = try temporaryPath("walk.gpx")
        var points = ""
        for second in stride(from: 0, to: 600, by: 10) {
            points += "<trkpt lat=\"\(45 + Double(second) * 1e-5)\" lon=\"14\"><time>2020-01-01T00:\(String(format: "%02d:%02d", second / 60, second % 60))Z</time></trkpt>\n"
        }
        try "<gpx version=\"1.1\"><trk><trkseg>\n\(points)</trkseg></trk></gpx>".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try run(["--trace", path, "--policy", "fixed", "--interval", "30s", "--receiver", "ublox-m8", "--json"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"trace\":\"walk\""))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func missingTraceExitsWith1AndNamesTheFile() throws {
        let result = try run(["--trace", "/nonexistent/walk.gpx", "--policy", "fixed", "--receiver", "mt3339"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/walk.gpx: no such file"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func badTraceLineIsNamed() throws {
        let path = try temporaryPath("bad.csv")
        try "time,lat,lon\n2020-06-04T11:00:30Z,36.8,-76.3\n2020-06-04T11:01:30Z,north,-76.3\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try run(["--trace", path, "--policy", "always-on", "--receiver", "mt3339"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.csv:3: bad latitude 'north'"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func intervalWithAdaptiveIsAUsageError() throws {
        let result = try run(["--scenario", "commute", "--policy", "adaptive", "--interval", "30s", "--receiver", "mt3339"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--interval does not apply to --policy adaptive"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func unknownPolicyIsAUsageError() throws {
        let result = try run(["--scenario", "commute", "--policy", "sometimes", "--receiver", "mt3339"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("'always-on', 'fixed' or 'adaptive'"))
    }
}
