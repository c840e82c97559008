import Foundation
import TernCore
import TernStore
import TernUplink
import TOMLKit

extension TernConfig {
    /// The secrets file read with the config at `path`: `$CREDENTIALS_DIRECTORY/secrets.toml` when systemd
    /// passes it as a credential (`LoadCredential=secrets.toml:…`), else `secrets.toml` beside the config.
    public static func secretsPath(forConfig path: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let credentials = environment["CREDENTIALS_DIRECTORY"],
           FileManager.default.fileExists(atPath: (credentials as NSString).appendingPathComponent("secrets.toml"))
        {
            return (credentials as NSString).appendingPathComponent("secrets.toml")
        }
        return ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("secrets.toml")
    }

    /// Reads and validates a TOML config file, and the secrets file beside it when there is one
    /// (`secretsPath(forConfig:)`): its `[uplink]` token, username and password override the config's.
    /// With `trace`, every key read is noted there (`tern config show`).
    public static func load(path: String, secrets: String? = nil, trace: ConfigTrace? = nil) throws(ConfigError) -> TernConfig {
        var config = try loadMain(path: path, trace: trace)
        if config.uplink.token != nil || config.uplink.password != nil, worldReadable(path) { config.secretsWorldReadable = path }
        let secretsPath = secrets ?? secretsPath(forConfig: path)
        if FileManager.default.fileExists(atPath: secretsPath) {
            do {
                try config.applySecrets(try text(of: secretsPath), path: secretsPath)
            } catch {
                throw ConfigError(key: error.key, "in \(secretsPath): \(error.message)")
            }
        }
        return config
    }

    /// Reads a file as UTF-8 text, or says why not.
    private static func text(of path: String) throws(ConfigError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(key: "", "cannot read \(path): check its permissions (the tern user must be able to read it)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ConfigError(key: "", "\(path) is not UTF-8 text") }
        return text
    }

    /// Applies a secrets file's text: only `[uplink] token`, `username`, `password` (anything else
    /// belongs in the config, and is refused here so that a typo is not silently ignored).
    public mutating func applySecrets(_ text: String, path: String) throws(ConfigError) {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch {
            throw ConfigError(key: "", "\(path) is not valid TOML: \(error)")
        }
        var root = ConfigReader(table: table, prefix: "")
        try root.rejectUnknownKeys(known: ["uplink"])
        var uplinkTable = try root.table("uplink")
        if let token = try uplinkTable.optionalString("token") { uplink.token = token }
        if let username = try uplinkTable.optionalString("username") { uplink.username = username }
        if let password = try uplinkTable.optionalString("password") { uplink.password = password }
        try uplinkTable.rejectUnknownKeys()
        if uplink.password != nil && uplink.username == nil {
            throw ConfigError(key: "uplink.password", "set uplink.username too (the password goes with a user)")
        }
        if Self.worldReadable(path) { secretsWorldReadable = path }
    }

    /// Whether every user may read the file at `path`.
    static func worldReadable(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IROTH != 0
    }

    /// Reads and validates a TOML config file (without secrets).
    static func loadMain(path: String, trace: ConfigTrace? = nil) throws(ConfigError) -> TernConfig {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigError(key: "", "no such file: \(path); pass an existing file with --config (examples: board/*.toml)")
        }
        return try parse(try text(of: path), trace: trace)
    }

    /// Parses and validates TOML text. Unknown keys are errors (they are usually typos).
    public static func parse(_ text: String, trace: ConfigTrace? = nil) throws(ConfigError) -> TernConfig {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError(key: "", "not valid TOML at \(error.source.begin.debugDescription): \(error.description)")
        } catch {
            throw ConfigError(key: "", "not valid TOML: \(error)")
        }
        var root = ConfigReader(table: table, prefix: "", trace: trace)
        try root.rejectUnknownKeys(known: ["device", "data_dir", "status_file", "control_socket", "log_level", "receiver", "power", "scheduler", "filter", "uplink", "store", "metrics", "time"])
        let config = try read(&root, table: table)
        try root.rejectUnknownKeys()
        return config
    }

    private static func read(_ root: inout ConfigReader, table: TOMLTable) throws(ConfigError) -> TernConfig {
        /// The keys present in a section, for keys whose default depends on others.
        func keys(of section: String) -> Set<String> { Set(table[section]?.tomlValue.table?.keys ?? []) }
        let device = try root.string("device", default: DeviceIdentity.current(), pattern: "letters, digits, '-', '_' or '.'") {
            !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
        }
        let dataDirectory = try root.string("data_dir", default: "/var/lib/tern", pattern: "an absolute or relative directory path") { !$0.isEmpty }
        let statusFile = try root.string("status_file", default: defaultStatusFile, pattern: "a file path such as /run/tern/status.json") {
            !$0.isEmpty && !$0.hasSuffix("/")
        }

        var receiverTable = try root.table("receiver")
        var receiverOptions = TernConfig.ReceiverOptions()
        let kind = try receiverTable.choice("kind", ["serial", "simulated"], default: "serial")
        let receiver: Receiver
        if kind == "serial" {
            receiver = .serial(
                device: try receiverTable.string("device", default: "/dev/serial0", pattern: "a device path such as /dev/serial0") { $0.hasPrefix("/") },
                baud: try receiverTable.int("baud", default: 9600, allowed: [4800, 9600, 19200, 38400, 57600, 115200]))
            receiverOptions = TernConfig.ReceiverOptions(
                chipset: try receiverTable.choice(
                    "chipset", ["auto", "mediatek", "quectel", "ublox", "ublox9", "generic"], default: "auto"),
                autobaud: try receiverTable.bool("autobaud", default: false),
                silenceTimeout: try receiverTable.duration("silence_timeout", default: .seconds(5), range: .seconds(1) ... .seconds(600)),
                referenceDate: try receiverTable.date("reference_date"))
        } else {
            receiver = .simulated(
                speed: try receiverTable.double("speed", default: 1, range: 0.1...1000),
                seed: UInt64(try receiverTable.int("seed", default: 1, range: 0...Int.max)))
        }
        let model = try receiverTable.choice("model", ["auto", "mt3339", "ublox-m8"], default: "auto")
        try receiverTable.rejectUnknownKeys()

        var powerTable = try root.table("power")
        let power = try readPower(&powerTable, keys: keys(of: "power"), kind: kind, chipset: receiverOptions.chipset)
        try powerTable.rejectUnknownKeys()

        var schedulerTable = try root.table("scheduler")
        let scheduler = try readScheduler(
            &schedulerTable, keys: keys(of: "scheduler"),
            energy: energy(model: model, chipset: receiverOptions.chipset, power: power))
        try schedulerTable.rejectUnknownKeys()

        var filterTable = try root.table("filter")
        let filter = try readFilter(&filterTable, keys: keys(of: "filter"), scheduler: scheduler)
        try filterTable.rejectUnknownKeys()

        var uplinkTable = try root.table("uplink")
        let uplink = try readUplink(&uplinkTable, kind: kind, device: device)
        try uplinkTable.rejectUnknownKeys()

        var storeTable = try root.table("store")
        let commitWindow = GroupCommit.Window(
            maxDelay: try storeTable.duration("commit_interval", default: GroupCommit.Window().maxDelay, range: .zero ... .seconds(60)),
            maxPositions: try storeTable.int("commit_positions", default: GroupCommit.Window().maxPositions, range: 1...1000))
        let store = Store(
            capacity: QueueCapacity(
                maxPositions: try storeTable.int("max_positions", default: 1_000_000, range: 100...100_000_000),
                maxBytes: try storeTable.int("max_size_mb", default: 256, range: 1...100_000) << 20,
                maxAge: try storeTable.optionalDuration("max_age", range: .seconds(3600) ... .seconds(3650 * 86_400)),
                overflow: QueueCapacity.Overflow(
                    rawValue: try storeTable.choice("overflow", QueueCapacity.Overflow.allCases.map(\.rawValue), default: "drop-oldest"))
                    ?? .dropOldest))
        try storeTable.rejectUnknownKeys()

        var metricsTable = try root.table("metrics")
        let metrics = try readMetrics(&metricsTable)
        try metricsTable.rejectUnknownKeys()

        var timeTable = try root.table("time")
        let time = try readTime(&timeTable, receiver: receiver)
        try timeTable.rejectUnknownKeys()

        let logLevel = try root.choice("log_level", ["trace", "debug", "info", "notice", "warning", "error", "critical"], default: "info")
        var config = TernConfig(
            device: device, dataDirectory: dataDirectory, receiver: receiver, power: power,
            core: GatewayCore.Configuration(scheduler: scheduler, filter: filter, commitWindow: commitWindow), uplink: uplink,
            logLevel: logLevel)
        config.receiverOptions = receiverOptions
        config.statusFile = statusFile
        config.controlSocket = try root.string("control_socket", default: defaultControlSocket, pattern: "a socket path such as /run/tern/control.sock") {
            !$0.isEmpty && !$0.hasSuffix("/") && $0.utf8.count < 100
        }
        config.store = store
        config.metrics = metrics
        config.time = time
        return config
    }

    /// `[time]`: chronyd's SOCK refclock socket, and the PPS device for flash-image.sh's chrony snippet.
    private static func readTime(_ table: inout ConfigReader, receiver: Receiver) throws(ConfigError) -> Time {
        // sockaddr_un holds 108 bytes, the terminating NUL included.
        let socket = try table.string(
            "chrony_socket", default: "", pattern: "an absolute socket path shorter than 108 bytes such as \(Time.defaultChronySocket)"
        ) { $0.isEmpty || ($0.hasPrefix("/") && !$0.hasSuffix("/") && $0.utf8.count < 108) }
        let pps = try table.string("pps", default: "", pattern: "a PPS device such as /dev/pps0") {
            $0.isEmpty || ($0.hasPrefix("/dev/") && $0.count > 5)
        }
        if !socket.isEmpty, case .simulated = receiver {
            throw ConfigError(
                key: "time.chrony_socket",
                "the simulated board's receiver keeps its own time, not UTC: chrony would set the clock by it; remove time.chrony_socket (or use receiver.kind = \"serial\")")
        }
        return Time(chronySocket: socket.isEmpty ? nil : socket, pps: pps.isEmpty ? nil : pps)
    }

    /// `[metrics]`: a node_exporter textfile directory and/or a `HOST:PORT` for `GET /metrics`.
    private static func readMetrics(_ table: inout ConfigReader) throws(ConfigError) -> Metrics {
        let directory = try table.string("textfile_dir", default: "", pattern: "an absolute directory path such as /var/lib/prometheus/node-exporter") {
            $0.isEmpty || $0.hasPrefix("/")
        }
        let listenText = try table.string("listen", default: "", pattern: "HOST:PORT such as 127.0.0.1:9464 or [::1]:9464") {
            $0.isEmpty || hostPort($0) != nil
        }
        return Metrics(
            textfileDirectory: directory.isEmpty ? nil : directory,
            listen: listenText.isEmpty ? nil : hostPort(listenText),
            interval: try table.duration("interval", default: Metrics().interval, range: .seconds(1) ... .seconds(3600)))
    }

    /// `127.0.0.1:9464` → ("127.0.0.1", 9464); `[::1]:9464` → ("::1", 9464); nil when malformed.
    static func hostPort(_ text: String) -> HostPort? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else { return nil }
        return HostPort(host: host, port: port)
    }

    /// `[uplink]`: the protocol and its keys.
    private static func readUplink(_ table: inout ConfigReader, kind: String, device: String) throws(ConfigError) -> Uplink {
        let localCollector = try table.bool("local_collector", default: false)
        if localCollector && kind != "simulated" {
            throw ConfigError(key: "uplink.local_collector", "only for the simulated board (receiver.kind = \"simulated\"); set uplink.url instead")
        }
        let proto = Uplink.Wire(
            rawValue: try table.choice("protocol", Uplink.Wire.allCases.map(\.rawValue), default: "tern")) ?? .tern
        if localCollector && proto != .tern {
            throw ConfigError(key: "uplink.local_collector", "the local collector speaks Tern's protocol: remove uplink.protocol or the collector")
        }
        let url = try table.url("url", required: !localCollector, schemes: proto == .mqtt ? ["mqtt", "mqtts"] : ["http", "https"])
        let base = try table.duration("backoff_base", default: .seconds(1), range: .milliseconds(100) ... .seconds(600))
        let maximum = try table.duration("backoff_max", default: .seconds(300), range: .seconds(1) ... .seconds(86_400))
        if maximum < base {
            throw ConfigError(key: "uplink.backoff_max", "must be at least uplink.backoff_base")
        }
        var uplink = Uplink(
            url: url, token: try table.optionalString("token"),
            batchSize: try table.int("batch_size", default: 100, range: 1...10_000),
            timeout: try table.duration("timeout", default: .seconds(30), range: .seconds(1) ... .seconds(600)),
            backoff: Backoff(base: base, maximum: maximum, jitter: 0.5),
            localCollector: localCollector)
        uplink.protocol = proto
        uplink.connectTimeout = try table.duration("connect_timeout", default: .seconds(10), range: .milliseconds(100) ... .seconds(120))
        uplink.username = try table.optionalString("username")
        uplink.password = try table.optionalString("password")
        if uplink.password != nil && uplink.username == nil {
            throw ConfigError(key: "uplink.password", "set uplink.username too (the password goes with a user)")
        }
        uplink.topic = try table.string("topic", default: "", pattern: "an MQTT topic without wildcards, e.g. owntracks/me/\(device)") {
            !$0.contains("+") && !$0.contains("#")
        }
        if uplink.topic?.isEmpty == true { uplink.topic = nil }
        uplink.trackerID = try table.optionalString("tracker_id")
        uplink.caFile = try table.optionalString("ca_file")
        if let caFile = uplink.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ConfigError(key: "uplink.ca_file", "cannot read \(caFile): give the path of a PEM file of CA certificates readable by the tern user")
        }
        uplink.proxy = try table.optionalString("proxy")
        uplink.liveFirst = try table.bool("live_first", default: false)
        uplink.parallel = try table.int("parallel", default: 1, range: 1...32)
        uplink.traccarFormat = OsmAnd.Format(
            rawValue: try table.choice("traccar_format", OsmAnd.Format.allCases.map(\.rawValue), default: "query")) ?? .query
        uplink.maxRecordAttempts = try table.int("max_record_attempts", default: 5, range: 1...100)
        return uplink
    }

    private static let gpioChipPattern = "a chip name, path, number or label"

    /// `[power]`: the method and its keys. Command methods need a serial receiver of their chipset.
    private static func readPower(
        _ table: inout ConfigReader, keys: Set<String>, kind: String, chipset: String
    ) throws(ConfigError) -> Power {
        let methods = ["none", "gpio", "l76x", "pmtk-standby", "ubx-backup", "simulated"]
        let method = try table.choice("method", methods, default: kind == "simulated" ? "simulated" : "none")
        if kind == "simulated" && method != "simulated" {
            throw ConfigError(key: "power.method", "the simulated receiver needs power.method = \"simulated\", got \"\(method)\"")
        }
        let mediatek = ["auto", "mediatek", "quectel"], ublox = ["auto", "ublox", "ublox9"]
        func requireChipset(_ allowed: [String], _ instead: String) throws(ConfigError) {
            guard allowed.contains(chipset) else {
                throw ConfigError(
                    key: "power.method",
                    "\"\(method)\" does not work with receiver.chipset = \"\(chipset)\"; use \(instead)")
            }
        }
        switch method {
        case "gpio":
            return .gpio(
                chip: try table.string("chip", default: "gpiochip0", pattern: gpioChipPattern) { !$0.isEmpty },
                line: try table.gpioLine("line"),
                activeLow: try table.bool("active_low", default: false))
        case "l76x":
            try requireChipset(mediatek, "\"ubx-backup\" for u-blox or \"gpio\" for a supply switch")
            let standby: GPIOLineSpec = keys.contains("standby_line") ? try table.gpioLine("standby_line") : .offset(4)
            let forceOn: GPIOLineSpec = keys.contains("force_on_line") ? try table.gpioLine("force_on_line") : .offset(17)
            if standby == forceOn {
                throw ConfigError(key: "power.force_on_line", "must differ from power.standby_line (both are \(forceOn))")
            }
            return .l76x(
                chip: try table.string("chip", default: "gpiochip0", pattern: gpioChipPattern) { !$0.isEmpty },
                standbyLine: standby, forceOnLine: forceOn,
                sleep: L76XSleep(rawValue: try table.choice("sleep", ["backup", "standby"], default: "backup")) ?? .backup)
        case "pmtk-standby":
            try requireChipset(mediatek, "\"ubx-backup\" for u-blox receivers")
            return .pmtkStandby
        case "ubx-backup":
            try requireChipset(ublox, "\"pmtk-standby\" for MediaTek/Quectel receivers")
            return .ubxBackup
        case "simulated":
            guard kind == "simulated" else {
                throw ConfigError(
                    key: "power.method",
                    "\"simulated\" needs receiver.kind = \"simulated\"; use \"gpio\", \"l76x\", \"pmtk-standby\", \"ubx-backup\" or \"none\" with a real receiver")
            }
            return .simulated
        default:
            return .none
        }
    }

    /// The energy profile: `receiver.model`, else from the chipset (u-blox → M8, otherwise MT3339).
    private static func energy(model: String, chipset: String, power: Power) -> ReceiverEnergy {
        switch model {
        case "mt3339": return .mt3339
        case "ublox-m8": return .ubloxM8
        default: return ["ublox", "ublox9"].contains(chipset) || power == .ubxBackup ? .ubloxM8 : .mt3339
        }
    }

    /// `[scheduler]`: the policy and its keys; keys of another policy are errors. `interval` alone
    /// (configs written before the policies) means `fixed`, or `always-on` when it is 0s.
    private static func readScheduler(
        _ table: inout ConfigReader, keys: Set<String>, energy: ReceiverEnergy
    ) throws(ConfigError) -> FixScheduler.Options {
        // Configs from before the policies had only `interval` (0s = always on): they keep their meaning.
        let legacy = keys.contains("interval") && !keys.contains("policy")
        var policyName = try table.choice("policy", ["adaptive", "fixed", "always-on"], default: legacy ? "fixed" : "adaptive")
        if legacy, try table.duration("interval", default: .seconds(60), range: .zero ... .seconds(86_400)) == .zero {
            policyName = "always-on"
        }
        let owners = ["interval": "fixed", "error_budget_m": "adaptive", "min_interval": "adaptive", "max_interval": "adaptive"]
        if let (key, owner) = owners.sorted(by: { $0.key < $1.key }).first(where: { keys.contains($0.key) && $0.value != policyName && !(legacy && $0.key == "interval") }) {
            throw ConfigError(
                key: "scheduler.\(key)",
                "only used with policy = \"\(owner)\", but the policy is \"\(policyName)\"; remove the key or set policy = \"\(owner)\"")
        }
        let policy: FixPolicy
        switch policyName {
        case "fixed":
            let interval = try table.duration("interval", default: .seconds(60), range: .zero ... .seconds(86_400))
            if interval == .zero {
                throw ConfigError(key: "scheduler.interval", "0s does not keep the receiver on any more: set policy = \"always-on\", or an interval of at least 1s")
            }
            policy = .fixed(interval: interval)
        case "always-on":
            policy = .alwaysOn
        default:
            let budget = try table.double("error_budget_m", default: FixPolicy.shippedErrorBudget, range: 1...10_000)
            let minimum = try table.duration("min_interval", default: FixPolicy.shippedMinInterval, range: .seconds(1) ... .seconds(3_600))
            let maximum = try table.duration("max_interval", default: FixPolicy.shippedMaxInterval, range: .seconds(1) ... .seconds(86_400))
            if maximum < minimum {
                throw ConfigError(
                    key: "scheduler.max_interval",
                    "must be at least scheduler.min_interval (\(DurationText.format(minimum))), got \(DurationText.format(maximum))")
            }
            policy = .adaptive(errorBudget: budget, minInterval: minimum, maxInterval: maximum)
        }
        // Every default is the type's own (one set of defaults: an empty table is what ships).
        let shipped = FixScheduler.Options()
        var options = FixScheduler.Options(
            policy: policy,
            acquisitionTimeout: try table.duration("acquisition_timeout", default: shipped.acquisitionTimeout, range: .seconds(5) ... .seconds(3_600)),
            accuracyTarget: try table.double("accuracy_target_m", default: shipped.accuracyTarget, range: 1...1_000),
            energy: energy,
            hotStartTimeout: try table.duration("hot_start_timeout", default: shipped.hotStartTimeout, range: .seconds(3) ... .seconds(3_600)))
        options.plausibility = shipped.plausibility
        return options
    }

    private static func readFilter(
        _ table: inout ConfigReader, keys: Set<String>, scheduler: FixScheduler.Options
    ) throws(ConfigError) -> StandardLocationFilter.Options {
        let shipped = StandardLocationFilter.Options()
        let shippedThinning = shipped.thinning ?? TrackThinning.Options()
        let budget = scheduler.policy.thinningTolerance
        let thinningName = try table.choice("thinning", ["budget", "minimums", "off"], default: "budget")
        let owners = ["thin_tolerance_m": "budget", "min_distance_m": "minimums", "min_angle_deg": "minimums", "min_period": "minimums"]
        if let (key, owner) = owners.sorted(by: { $0.key < $1.key }).first(where: { keys.contains($0.key) && $0.value != thinningName }) {
            throw ConfigError(
                key: "filter.\(key)",
                "only used with thinning = \"\(owner)\", but thinning is \"\(thinningName)\"; remove the key or set thinning = \"\(owner)\"")
        }
        let rule: TrackThinning.Rule?
        switch thinningName {
        case "off":
            rule = nil
        case "minimums":
            rule = .minimums(
                distance: try table.double("min_distance_m", default: 100, range: 0...100_000),
                angle: try table.double("min_angle_deg", default: 10, range: 0...180),
                period: try table.duration("min_period", default: .seconds(300), range: .seconds(1) ... .seconds(86_400)))
        default:
            rule = .errorBudget(tolerance: try table.double("thin_tolerance_m", default: budget, range: 0...10_000))
        }
        let heartbeat = try table.duration("heartbeat", default: shippedThinning.heartbeat, range: .seconds(1) ... .seconds(7 * 86_400))
        let maxHeld = try table.duration("max_held", default: shippedThinning.maxHeld, range: .seconds(1) ... .seconds(86_400))
        return StandardLocationFilter.Options(
            maxAccuracy: try table.double("max_accuracy_m", default: shipped.maxAccuracy, range: 1...10_000),
            maxSpeed: try table.double("max_speed_mps", default: shipped.maxSpeed, range: 1...1_000),
            jumpTolerance: try table.double("jump_tolerance_m", default: shipped.jumpTolerance, range: 0...100_000),
            maxTimeAhead: try table.duration("max_time_ahead", default: .seconds(shipped.maxTimeAhead), range: .seconds(1) ... .seconds(86_400)).seconds,
            maxTimeBehind: try table.duration("max_time_behind", default: .seconds(shipped.maxTimeBehind), range: .seconds(1) ... .seconds(86_400)).seconds,
            reanchorAfter: try table.int("reanchor_after", default: shipped.reanchorAfter, range: 0...1000),
            warmUp: try table.duration("warm_up", default: shipped.warmUp, range: .zero ... .seconds(600)),
            thinning: rule.map { TrackThinning.Options(rule: $0, heartbeat: heartbeat, maxHeld: maxHeld) })
    }
}
