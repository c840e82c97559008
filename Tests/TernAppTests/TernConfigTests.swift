import Foundation
import Testing
import TernApp
import TernCore

@Suite struct TernConfigTests {
    private static let minimal = """
        [uplink]
        url = "https://tracker.example.com/positions"
        """

    private func expectError(_ toml: String, key: String, mentioning text: String) {
        do {
            _ = try TernConfig.parse(toml)
            Issue.record("expected a config error at \(key)")
        } catch {
            #expect(error.key == key)
            #expect(error.message.contains(text), "message: \(error.message)")
        }
    }

    @Test func minimalConfigGetsSafeDefaults() throws {
        let sut = try TernConfig.parse(Self.minimal)
        #expect(sut.receiver == .serial(device: "/dev/serial0", baud: 9600))
        #expect(sut.power == .none)
        #expect(sut.scheduler == .init(interval: .seconds(60), acquisitionTimeout: .seconds(90)))
        #expect(sut.dataDirectory == "/var/lib/tern")
        #expect(sut.queuePath == "/var/lib/tern/queue.sqlite")
    }

    @Test(arguments: ["simulated.toml", "raspberry-pi-gps-hat.toml"])
    func documentedBoardExampleParses(file: String) throws {
        let path = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../board/\(file)").path
        _ = try TernConfig.load(path: path)
    }

    @Test func durationsAcceptUnitsAndSeconds() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\ninterval = \"15m\"\nacquisition_timeout = 45\n")
        #expect(sut.scheduler.interval == .seconds(900))
        #expect(sut.scheduler.acquisitionTimeout == .seconds(45))
    }

    @Test func gpioPowerTakesALineNameOrOffset() throws {
        let byName = try TernConfig.parse(Self.minimal + "\n[power]\nmethod = \"gpio\"\nline = \"GPS_EN\"\nactive_low = true\n")
        #expect(byName.power == .gpio(chip: "gpiochip0", line: .name("GPS_EN"), activeLow: true))
        let byOffset = try TernConfig.parse(Self.minimal + "\n[power]\nmethod = \"gpio\"\nchip = \"gpiochip4\"\nline = 17\n")
        #expect(byOffset.power == .gpio(chip: "gpiochip4", line: .offset(17), activeLow: false))
    }

    @Test func receiverOptionsHaveSafeDefaults() throws {
        let sut = try TernConfig.parse(Self.minimal)
        #expect(sut.receiverOptions == .init(chipset: "auto", autobaud: false, silenceTimeout: .seconds(5), referenceDate: nil))
    }

    @Test func receiverOptionsAreRead() throws {
        let sut = try TernConfig.parse(
            Self.minimal + "\n[receiver]\nchipset = \"ublox\"\nautobaud = true\nsilence_timeout = \"10s\"\nreference_date = 2026-11-21\n")
        #expect(sut.receiverOptions.chipset == "ublox")
        #expect(sut.receiverOptions.autobaud)
        #expect(sut.receiverOptions.silenceTimeout == .seconds(10))
        #expect(sut.receiverOptions.referenceDate == Date(timeIntervalSince1970: 1_795_219_200))
    }

    @Test func referenceDateAcceptsAQuotedDay() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[receiver]\nreference_date = \"2026-11-21\"\n")
        #expect(sut.receiverOptions.referenceDate == Date(timeIntervalSince1970: 1_795_219_200))
    }

    @Test func badReferenceDateSaysTheFormat() {
        expectError(Self.minimal + "\n[receiver]\nreference_date = \"21.11.2026\"\n", key: "receiver.reference_date", mentioning: "YYYY-MM-DD")
    }

    @Test func unknownChipsetListsTheDrivers() {
        expectError(Self.minimal + "\n[receiver]\nchipset = \"sirf\"\n", key: "receiver.chipset", mentioning: "\"mediatek\"")
    }

    @Test func unsupportedBaudNamesTheKeyAndTheChoices() {
        expectError(Self.minimal + "\n[receiver]\nbaud = 9601\n", key: "receiver.baud", mentioning: "4800, 9600")
    }

    @Test func misspeltTopLevelKeyIsReportedFirst() {
        expectError("recever = 1\n", key: "recever", mentioning: "unknown key")
    }

    @Test func misspeltSectionKeyIsReported() {
        expectError(Self.minimal + "\n[scheduler]\nintervall = \"30s\"\n", key: "scheduler.intervall", mentioning: "interval")
    }

    @Test func badDurationSaysWhatIsExpected() {
        expectError(Self.minimal + "\n[scheduler]\ninterval = \"fast\"\n", key: "scheduler.interval", mentioning: "\"15m\"")
    }

    @Test func missingURLSaysHowToSetIt() {
        expectError("", key: "uplink.url", mentioning: "url = ")
    }

    @Test func nonHTTPURLIsRejected() {
        expectError("[uplink]\nurl = \"ftp://example.com\"\n", key: "uplink.url", mentioning: "http:// or https://")
    }

    @Test func gpioWithoutALineIsRejected() {
        expectError(Self.minimal + "\n[power]\nmethod = \"gpio\"\n", key: "power.line", mentioning: "offset")
    }

    @Test func simulatedPowerNeedsTheSimulatedReceiver() {
        expectError(Self.minimal + "\n[power]\nmethod = \"simulated\"\n", key: "power.method", mentioning: "receiver.kind")
    }

    @Test func localCollectorOnlyOnTheSimulatedBoard() {
        expectError("[uplink]\nlocal_collector = true\n", key: "uplink.local_collector", mentioning: "simulated")
    }

    @Test func backoffMaximumBelowBaseIsRejected() {
        expectError(Self.minimal + "\nbackoff_base = \"10s\"\nbackoff_max = \"5s\"\n", key: "uplink.backoff_max", mentioning: "backoff_base")
    }

    @Test func brokenTOMLNamesTheLine() {
        expectError("[receiver\n", key: "", mentioning: "line 1")
    }

    @Test func missingFileSaysSo() {
        #expect(throws: ConfigError(key: "", "no such file: /nonexistent/tern.toml; pass an existing file with --config (examples: board/*.toml)")) {
            try TernConfig.load(path: "/nonexistent/tern.toml")
        }
    }

    @Test func configErrorsExitWithEXCONFIG() {
        #expect(ConfigError.exitCode == 78)
    }
}

@Suite struct DurationTextTests {
    @Test(arguments: [("90s", 90.0), ("15m", 900), ("2h", 7200), ("500ms", 0.5), ("42", 42), (" 3s ", 3)])
    func parses(text: String, seconds: Double) {
        #expect(DurationText.parse(text)?.seconds == seconds)
    }

    @Test(arguments: ["", "fast", "-5s", "5 minutes", "1e400"])
    func rejects(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func formatsTheShortestExactForm() {
        #expect([Duration.seconds(7200), .seconds(900), .seconds(90), .milliseconds(500)].map(DurationText.format) == ["2h", "15m", "90s", "500ms"])
    }
}
