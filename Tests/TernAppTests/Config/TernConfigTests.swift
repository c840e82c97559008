import Foundation
import Testing
import TernApp
import TernCore
import TernUplink

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

    @Test func traccarIsChosenWithItsOwnDefaults() throws {
        let sut = try TernConfig.parse("[uplink]\nprotocol = \"traccar\"\nurl = \"http://traccar.example.com:5055/\"\n")
        #expect(sut.uplink.protocol == .traccar)
        #expect(sut.uplink.liveFirst == false)
        #expect(sut.uplink.parallel == 1)
        #expect(sut.uplink.traccarFormat == .query)
    }

    @Test func mqttTakesABrokerURLTopicAndCredentials() throws {
        let sut = try TernConfig.parse("""
            [uplink]
            protocol = "mqtt"
            url = "mqtts://broker.example.net:8883"
            topic = "owntracks/alice/van"
            username = "alice"
            password = "secret"
            """)
        #expect(sut.uplink.protocol == .mqtt)
        #expect(sut.uplink.url?.scheme == "mqtts")
        #expect(sut.uplink.topic == "owntracks/alice/van")
    }

    @Test func anMQTTTopicWithAWildcardIsAnError() {
        expectError("[uplink]\nprotocol = \"mqtt\"\nurl = \"mqtt://b\"\ntopic = \"owntracks/#\"\n", key: "uplink.topic", mentioning: "wildcards")
    }

    @Test func liveFirstIsOptIn() throws {
        #expect(try TernConfig.parse(Self.minimal).uplink.liveFirst == false)
        #expect(try TernConfig.parse(Self.minimal + "\nlive_first = true\n").uplink.liveFirst)
    }

    @Test func anHTTPProtocolRefusesAnMQTTURL() {
        expectError("[uplink]\nurl = \"mqtt://broker:1883\"\n", key: "uplink.url", mentioning: "http:// or https://")
    }

    @Test func metricsAreOffByDefault() throws {
        #expect(try TernConfig.parse(Self.minimal).metrics.isEnabled == false)
    }

    @Test func metricsTakeATextfileDirectoryAndAListenAddress() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[metrics]\ntextfile_dir = \"/var/lib/prometheus/node-exporter\"\nlisten = \"[::1]:9464\"\n")
        #expect(sut.metrics.textfileDirectory == "/var/lib/prometheus/node-exporter")
        #expect(sut.metrics.listen?.host == "::1")
        #expect(sut.metrics.listen?.port == 9464)
        #expect(sut.metrics.interval == .seconds(60))
    }

    @Test func timeForChronyIsOffByDefault() throws {
        #expect(try TernConfig.parse(Self.minimal).time == TernConfig.Time())
    }

    @Test func timeTakesChronysSocketAndAPPSDevice() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[time]\nchrony_socket = \"/run/chrony.tern.sock\"\npps = \"/dev/pps0\"\n")
        #expect(sut.time == TernConfig.Time(chronySocket: "/run/chrony.tern.sock", pps: "/dev/pps0"))
    }

    @Test func aRelativeChronySocketIsAnErrorNamingTheKey() {
        expectError(Self.minimal + "\n[time]\nchrony_socket = \"tern.sock\"\n", key: "time.chrony_socket", mentioning: "absolute socket path")
    }

    @Test func aChronySocketPathTooLongForASocketAddressIsAnError() {
        let long = "/run/" + String(repeating: "x", count: 103)
        expectError(Self.minimal + "\n[time]\nchrony_socket = \"\(long)\"\n", key: "time.chrony_socket", mentioning: "shorter than 108 bytes")
    }

    @Test func aPPSThatIsNotADeviceIsAnError() {
        expectError(Self.minimal + "\n[time]\npps = \"pps0\"\n", key: "time.pps", mentioning: "/dev/pps0")
    }

    @Test func anUnknownTimeKeyIsAnError() {
        expectError(Self.minimal + "\n[time]\nchrony = \"/run/chrony.tern.sock\"\n", key: "time.chrony", mentioning: "chrony_socket")
    }

    @Test func theSimulatedBoardCannotSetTheClock() {
        expectError(
            "[receiver]\nkind = \"simulated\"\n[uplink]\nlocal_collector = true\n[time]\nchrony_socket = \"/run/chrony.tern.sock\"\n",
            key: "time.chrony_socket", mentioning: "keeps its own time")
    }

    @Test func aMetricsListenAddressWithoutAPortIsAnError() {
        expectError(Self.minimal + "\n[metrics]\nlisten = \"127.0.0.1\"\n", key: "metrics.listen", mentioning: "HOST:PORT")
    }

    @Test func metricsOnANetworkAddressAreWarnedAbout() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[metrics]\nlisten = \"0.0.0.0:9464\"\n")
        #expect(sut.warnings.contains { $0.hasPrefix("metrics.listen is 0.0.0.0:9464") })
        #expect(try TernConfig.parse(Self.minimal + "\n[metrics]\nlisten = \"127.0.0.1:9464\"\n").warnings.allSatisfy { !$0.hasPrefix("metrics") })
    }

    @Test func aPasswordWithoutAUserIsAnError() {
        expectError(Self.minimal + "\npassword = \"x\"\n", key: "uplink.password", mentioning: "uplink.username")
    }

    @Test func anUnknownProtocolNamesTheKnownOnes() {
        expectError(Self.minimal + "\nprotocol = \"osmand\"\n", key: "uplink.protocol", mentioning: "\"traccar\"")
    }

    @Test func anUnreadableCAFileIsAnError() {
        expectError(Self.minimal + "\nca_file = \"/nonexistent/ca.pem\"\n", key: "uplink.ca_file", mentioning: "PEM")
    }

    @Test func timeoutsAreConfigurable() throws {
        let sut = try TernConfig.parse(Self.minimal + "\nconnect_timeout = \"3s\"\ntimeout = \"20s\"\n")
        #expect(sut.uplink.httpSettings == UplinkHTTPSettings(connectTimeout: .seconds(3), readTimeout: .seconds(20)))
    }

    @Test func minimalConfigGetsSafeDefaults() throws {
        let sut = try TernConfig.parse(Self.minimal)
        #expect(sut.receiver == .serial(device: "/dev/serial0", baud: 9600))
        #expect(sut.power == .none)
        // One set of defaults: a file that sets nothing gets the types' own (what ships).
        #expect(sut.scheduler == FixScheduler.Options())
        #expect(sut.filter == StandardLocationFilter.Options())
        #expect(sut.core.commitWindow == GroupCommit.Window())
        #expect(sut.dataDirectory == "/var/lib/tern")
        #expect(sut.queuePath == "/var/lib/tern/queue.sqlite")
        #expect(sut.statusFile == "/run/tern/status.json")
    }

    @Test func statusFileIsReadAndMustNameAFile() throws {
        let sut = try TernConfig.parse("status_file = \"/tmp/tern/status.json\"\n" + Self.minimal)
        #expect(sut.statusFile == "/tmp/tern/status.json")
        expectError("status_file = \"/run/tern/\"\n" + Self.minimal, key: "status_file", mentioning: "a file path")
    }

    @Test(arguments: ["simulated.toml", "raspberry-pi-gps-hat.toml"])
    func documentedBoardExampleParses(file: String) throws {
        let path = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../../board/\(file)").path
        _ = try TernConfig.load(path: path)
    }

    @Test func durationsAcceptUnitsAndSeconds() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\npolicy = \"fixed\"\ninterval = \"15m\"\nacquisition_timeout = 45\n")
        #expect(sut.scheduler.policy == .fixed(interval: .seconds(900)))
        #expect(sut.scheduler.acquisitionTimeout == .seconds(45))
    }

    // MARK: [scheduler]

    @Test func hotStartTimeoutIsReadAndRangeChecked() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\nhot_start_timeout = \"25s\"\n")
        #expect(sut.scheduler.hotStartTimeout == .seconds(25))
        #expect(throws: ConfigError.self) {
            try TernConfig.parse(Self.minimal + "\n[scheduler]\nhot_start_timeout = \"1s\"\n")
        }
    }

    @Test func adaptivePolicyKeysAreRead() throws {
        let sut = try TernConfig.parse(
            Self.minimal + "\n[scheduler]\npolicy = \"adaptive\"\nerror_budget_m = 50\nmin_interval = \"10s\"\nmax_interval = \"1h\"\n")
        #expect(sut.scheduler.policy == .adaptive(errorBudget: 50, minInterval: .seconds(10), maxInterval: .seconds(3600)))
    }

    @Test func fixedPolicyDefaultsToAMinute() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\npolicy = \"fixed\"\n")
        #expect(sut.scheduler.policy == .fixed(interval: .seconds(60)))
    }

    @Test func alwaysOnPolicyIsRead() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\npolicy = \"always-on\"\n")
        #expect(sut.scheduler.policy == .alwaysOn)
    }

    @Test func accuracyTargetIsRead() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\naccuracy_target_m = 8\n")
        #expect(sut.scheduler.accuracyTarget == 8)
    }

    @Test func unknownPolicyListsThePolicies() {
        expectError(Self.minimal + "\n[scheduler]\npolicy = \"smart\"\n", key: "scheduler.policy", mentioning: "\"always-on\"")
    }

    @Test func intervalAloneKeepsItsFixedMeaning() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\ninterval = \"30s\"\n")
        #expect(sut.scheduler.policy == .fixed(interval: .seconds(30)))
    }

    @Test func zeroIntervalAloneKeepsTheReceiverOn() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\ninterval = \"0s\"\n")
        #expect(sut.scheduler.policy == .alwaysOn)
    }

    @Test func intervalWithTheAdaptivePolicySaysToChooseFixed() {
        expectError(
            Self.minimal + "\n[scheduler]\npolicy = \"adaptive\"\ninterval = \"30s\"\n", key: "scheduler.interval",
            mentioning: "policy = \"fixed\"")
    }

    @Test func adaptiveKeyWithTheFixedPolicyIsRejected() {
        expectError(
            Self.minimal + "\n[scheduler]\npolicy = \"fixed\"\nerror_budget_m = 20\n", key: "scheduler.error_budget_m",
            mentioning: "policy = \"adaptive\"")
    }

    @Test func zeroIntervalPointsToAlwaysOn() {
        expectError(Self.minimal + "\n[scheduler]\npolicy = \"fixed\"\ninterval = \"0s\"\n", key: "scheduler.interval", mentioning: "always-on")
    }

    @Test func maxIntervalBelowMinIntervalIsRejected() {
        expectError(
            Self.minimal + "\n[scheduler]\nmin_interval = \"1m\"\nmax_interval = \"30s\"\n", key: "scheduler.max_interval",
            mentioning: "min_interval")
    }

    @Test func errorBudgetOutOfRangeSaysTheRange() {
        expectError(Self.minimal + "\n[scheduler]\nerror_budget_m = 0\n", key: "scheduler.error_budget_m", mentioning: "from 1")
    }

    @Test func accuracyTargetOutOfRangeSaysTheRange() {
        expectError(Self.minimal + "\n[scheduler]\naccuracy_target_m = -3\n", key: "scheduler.accuracy_target_m", mentioning: "from 1")
    }

    @Test func thePeersThinningRuleReadsItsMinimums() throws {
        let sut = try TernConfig.parse(Self.minimal + """

            [filter]
            thinning = "minimums"
            min_distance_m = 100
            min_angle_deg = 10
            min_period = "5m"
            heartbeat = "1h"
            reanchor_after = 5
            warm_up = "0s"
            """)
        #expect(sut.filter.thinning?.rule == .minimums(distance: 100, angle: 10, period: .seconds(300)))
        #expect(sut.filter.reanchorAfter == 5)
        #expect(sut.filter.warmUp == .zero)
    }

    @Test func aMinimumsKeyWithTheBudgetRuleSaysWhichRuleUsesIt() {
        expectError(Self.minimal + "\n[filter]\nmin_distance_m = 100\n", key: "filter.min_distance_m", mentioning: "thinning = \"minimums\"")
    }

    @Test func thinningFollowsTheSchedulersBudget() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[scheduler]\nerror_budget_m = 50\n")
        #expect(sut.filter.thinning?.rule == .errorBudget(tolerance: 50))
    }

    @Test func thinningCanBeSwitchedOff() throws {
        #expect(try TernConfig.parse(Self.minimal + "\n[filter]\nthinning = \"off\"\n").filter.thinning == nil)
    }

    @Test func ubloxChipsetChoosesTheUbloxEnergyProfile() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[receiver]\nchipset = \"ublox\"\n")
        #expect(sut.scheduler.energy == .ubloxM8)
    }

    @Test func mediatekChipsetChoosesTheMT3339EnergyProfile() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[receiver]\nchipset = \"mediatek\"\n")
        #expect(sut.scheduler.energy == .mt3339)
    }

    @Test func receiverModelOverridesTheChipset() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[receiver]\nchipset = \"generic\"\nmodel = \"ublox-m8\"\n")
        #expect(sut.scheduler.energy == .ubloxM8)
    }

    @Test func unknownReceiverModelListsTheModels() {
        expectError(Self.minimal + "\n[receiver]\nmodel = \"sirf4\"\n", key: "receiver.model", mentioning: "\"mt3339\"")
    }

    // MARK: [power]

    @Test func l76xPowerDefaultsToTheHATLines() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[power]\nmethod = \"l76x\"\n")
        #expect(sut.power == .l76x(chip: "gpiochip0", standbyLine: .offset(4), forceOnLine: .offset(17), sleep: .backup))
    }

    @Test func l76xPowerKeysAreRead() throws {
        let sut = try TernConfig.parse(
            Self.minimal + "\n[power]\nmethod = \"l76x\"\nchip = \"gpiochip4\"\nstandby_line = \"GPIO5\"\nforce_on_line = 6\nsleep = \"standby\"\n")
        #expect(sut.power == .l76x(chip: "gpiochip4", standbyLine: .name("GPIO5"), forceOnLine: .offset(6), sleep: .standby))
    }

    @Test func l76xWithOneLineForBothIsRejected() {
        expectError(
            Self.minimal + "\n[power]\nmethod = \"l76x\"\nstandby_line = 17\n", key: "power.force_on_line", mentioning: "standby_line")
    }

    @Test func l76xWithAUbloxChipsetIsRejected() {
        expectError(
            Self.minimal + "\n[receiver]\nchipset = \"ublox\"\n[power]\nmethod = \"l76x\"\n", key: "power.method", mentioning: "ubx-backup")
    }

    @Test func pmtkStandbyIsRead() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[power]\nmethod = \"pmtk-standby\"\n")
        #expect(sut.power == .pmtkStandby)
    }

    @Test func ubxBackupIsRead() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[power]\nmethod = \"ubx-backup\"\n")
        #expect(sut.power == .ubxBackup)
    }

    @Test func ubxBackupWithAutoChipsetChoosesTheUbloxEnergyProfile() throws {
        let sut = try TernConfig.parse(Self.minimal + "\n[power]\nmethod = \"ubx-backup\"\n")
        #expect(sut.scheduler.energy == .ubloxM8)
    }

    @Test func pmtkStandbyWithAUbloxChipsetSaysWhatToUse() {
        expectError(
            Self.minimal + "\n[receiver]\nchipset = \"ublox9\"\n[power]\nmethod = \"pmtk-standby\"\n", key: "power.method",
            mentioning: "ubx-backup")
    }

    @Test func ubxBackupWithAMediaTekChipsetSaysWhatToUse() {
        expectError(
            Self.minimal + "\n[receiver]\nchipset = \"quectel\"\n[power]\nmethod = \"ubx-backup\"\n", key: "power.method",
            mentioning: "pmtk-standby")
    }

    @Test func unknownPowerMethodListsTheMethods() {
        expectError(Self.minimal + "\n[power]\nmethod = \"relay\"\n", key: "power.method", mentioning: "\"l76x\"")
    }

    @Test func commandPowerWithTheSimulatedReceiverIsRejected() {
        expectError(
            "[receiver]\nkind = \"simulated\"\n[power]\nmethod = \"pmtk-standby\"\n[uplink]\nlocal_collector = true\n",
            key: "power.method", mentioning: "simulated")
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
        expectError(Self.minimal + "\n[scheduler]\npolicy = \"fixed\"\ninterval = \"fast\"\n", key: "scheduler.interval", mentioning: "\"15m\"")
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
