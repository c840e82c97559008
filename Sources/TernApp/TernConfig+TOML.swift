import Foundation
import TernCore
import TOMLKit

extension TernConfig {
    /// Reads and validates a TOML config file.
    public static func load(path: String) throws(ConfigError) -> TernConfig {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigError(key: "", "no such file: \(path); pass an existing file with --config (examples: board/*.toml)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(key: "", "cannot read \(path): check its permissions (the tern user must be able to read it)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(key: "", "\(path) is not UTF-8 text")
        }
        return try parse(text)
    }

    /// Parses and validates TOML text. Unknown keys are errors (they are usually typos).
    public static func parse(_ text: String) throws(ConfigError) -> TernConfig {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError(key: "", "not valid TOML at \(error.source.begin.debugDescription): \(error.description)")
        } catch {
            throw ConfigError(key: "", "not valid TOML: \(error)")
        }
        var root = ConfigReader(table: table, prefix: "")
        try root.rejectUnknownKeys(known: ["device", "data_dir", "log_level", "receiver", "power", "scheduler", "filter", "uplink"])
        let config = try read(&root)
        try root.rejectUnknownKeys()
        return config
    }

    private static func read(_ root: inout ConfigReader) throws(ConfigError) -> TernConfig {
        let device = try root.string("device", default: ProcessInfo.processInfo.hostName, pattern: "letters, digits, '-', '_' or '.'") {
            !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
        }
        let dataDirectory = try root.string("data_dir", default: "/var/lib/tern", pattern: "an absolute or relative directory path") { !$0.isEmpty }

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
        try receiverTable.rejectUnknownKeys()

        var powerTable = try root.table("power")
        let method = try powerTable.choice("method", ["none", "gpio", "simulated"], default: kind == "simulated" ? "simulated" : "none")
        let power: Power
        switch method {
        case "gpio":
            power = .gpio(
                chip: try powerTable.string("chip", default: "gpiochip0", pattern: "a chip name, path, number or label") { !$0.isEmpty },
                line: try powerTable.gpioLine("line"),
                activeLow: try powerTable.bool("active_low", default: false))
        case "simulated":
            guard kind == "simulated" else {
                throw ConfigError(key: "power.method", "\"simulated\" needs receiver.kind = \"simulated\"; use \"gpio\" or \"none\" with a real receiver")
            }
            power = .simulated
        default:
            power = .none
        }
        if kind == "simulated" && method != "simulated" {
            throw ConfigError(key: "power.method", "the simulated receiver needs power.method = \"simulated\", got \"\(method)\"")
        }
        try powerTable.rejectUnknownKeys()

        var schedulerTable = try root.table("scheduler")
        let scheduler = DutyCycleScheduler.Options(
            interval: try schedulerTable.duration("interval", default: .seconds(60), range: .zero ... .seconds(86_400)),
            acquisitionTimeout: try schedulerTable.duration("acquisition_timeout", default: .seconds(90), range: .seconds(5) ... .seconds(3_600)))
        try schedulerTable.rejectUnknownKeys()

        var filterTable = try root.table("filter")
        let filter = StandardLocationFilter.Options(
            maxAccuracy: try filterTable.double("max_accuracy_m", default: 50, range: 1...10_000),
            maxSpeed: try filterTable.double("max_speed_mps", default: 70, range: 1...1_000),
            jumpTolerance: try filterTable.double("jump_tolerance_m", default: 100, range: 0...100_000))
        try filterTable.rejectUnknownKeys()

        var uplinkTable = try root.table("uplink")
        let localCollector = try uplinkTable.bool("local_collector", default: false)
        if localCollector && kind != "simulated" {
            throw ConfigError(key: "uplink.local_collector", "only for the simulated board (receiver.kind = \"simulated\"); set uplink.url instead")
        }
        let url = try uplinkTable.url("url", required: !localCollector)
        let token = try uplinkTable.optionalString("token")
        let base = try uplinkTable.duration("backoff_base", default: .seconds(1), range: .milliseconds(100) ... .seconds(600))
        let maximum = try uplinkTable.duration("backoff_max", default: .seconds(300), range: .seconds(1) ... .seconds(86_400))
        if maximum < base {
            throw ConfigError(key: "uplink.backoff_max", "must be at least uplink.backoff_base")
        }
        let uplink = Uplink(
            url: url, token: token,
            batchSize: try uplinkTable.int("batch_size", default: 100, range: 1...10_000),
            timeout: try uplinkTable.duration("timeout", default: .seconds(30), range: .seconds(1) ... .seconds(600)),
            backoff: Backoff(base: base, maximum: maximum, jitter: 0.5),
            localCollector: localCollector)
        try uplinkTable.rejectUnknownKeys()

        let logLevel = try root.choice("log_level", ["trace", "debug", "info", "notice", "warning", "error", "critical"], default: "info")
        var config = TernConfig(
            device: device, dataDirectory: dataDirectory, receiver: receiver, power: power,
            scheduler: scheduler, filter: filter, uplink: uplink, logLevel: logLevel)
        config.receiverOptions = receiverOptions
        return config
    }
}
