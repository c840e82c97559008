import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernSimulation

extension Tern {
    /// `tern simulate`: a whole trace through the real scheduler and filter against a simulated
    /// receiver, in virtual time; prints what it cost and how far the track strayed.
    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a trace through the scheduler and a simulated receiver in virtual time: energy, fixes, track error.",
            discussion: """
                The trace is a GPX file (track or route points with times) or a CSV file \
                (time,lat,lon, ISO-8601 UTC), or a built-in --scenario. A 12-hour trace runs in \
                seconds. Energy is the receiver's supply current × voltage integrated over its power \
                states (datasheet figures, see ReceiverModel); the track error compares the accepted \
                fixes, interpolated, with the trace at every second.

                --fixes-out writes the accepted fixes as CSV (time,lat,lon,accuracy_m; time in \
                ISO-8601 UTC, so the file loads as a trace). --power-log writes every power-state \
                change as CSV (time,state: seconds since the trace start; off, acquiring, tracking, \
                standby; the run ends at duration_s).
                """)

        @Option(help: "Ground-truth trace: a .gpx or .csv file.")
        var trace: String?

        @Option(help: "A built-in scenario instead of --trace: \(Scenario.names.joined(separator: ", ")).")
        var scenario: String?

        @Option(help: "always-on, fixed or adaptive (or --config).")
        var policy: SimulationPolicyName?

        @Option(help: "A Tern configuration (a board profile, or /etc/tern/tern.toml): its scheduler and filter as the daemon reads them, instead of --policy and its options.")
        var config: String?

        @Option(help: "Time between fixes for --policy fixed, e.g. 60s (default 60s).", transform: DurationArgument.parse)
        var interval: Duration?

        @Option(help: "Adaptive: the track error to stay within, metres, e.g. 30m (default 30m).")
        var errorBudget: String?

        @Option(help: "Adaptive: the longest time between fixes, e.g. 15m (default 15m).", transform: DurationArgument.parse)
        var maxInterval: Duration?

        @Option(help: "Adaptive: the shortest time between fixes, e.g. 5s (default 5s).", transform: DurationArgument.parse)
        var minInterval: Duration?

        @Option(help: "Simulated receiver: mt3339 or ublox-m8 (with --config, default: the configuration's).")
        var receiver: SimulationReceiverName?

        @Option(help: "Random seed of the simulated receiver (noise, start times).")
        var seed: UInt64 = 1

        @Flag(help: "Print the figures as one JSON object on stdout.")
        var json = false

        @Option(help: "Write the accepted fixes to this CSV file.")
        var fixesOut: String?

        @Option(help: "Write the receiver's power-state changes to this CSV file.")
        var powerLog: String?

        @Option(
            name: .customLong("restart-at"),
            help: "Restart Tern at this time into the trace, e.g. 12h (repeatable): down 10 s, then a new scheduler.",
            transform: DurationArgument.parse)
        var restartAt: [Duration] = []

        @Flag(help: "On --restart-at, start from nothing instead of what the scheduler had learnt.")
        var forgetOnRestart = false

        func validate() throws {
            _ = try request()
        }

        /// The validated arguments.
        func request() throws -> SimulationRequest {
            try SimulationRequest(
                trace: trace, scenario: scenario, policy: policy, interval: interval, errorBudget: errorBudget,
                maxInterval: maxInterval, minInterval: minInterval, receiver: receiver, seed: seed,
                restarts: restartAt.map(\.seconds), remembers: !forgetOnRestart, configPath: config)
        }

        func run() throws {
            var request = try request()
            let input: SimulationInput
            do {
                if let config { request = request.configured(by: try TernConfig.load(path: config), path: config) }
                input = try request.input()
            } catch {
                // A trace or a configuration that cannot be read is bad input, not bad usage: the message, exit 1.
                throw Self.failure(String(describing: error))
            }
            let options = request.options(noSky: input.noSky)
            let result = simulate(trace: input.trace, options: options, scheduler: request.schedulerOptions(options))
            do {
                if let fixesOut {
                    try SimulationOutput.write(SimulationOutput.fixesCSV(result, start: input.trace.start), to: fixesOut)
                }
                if let powerLog {
                    try SimulationOutput.write(SimulationOutput.powerLogCSV(result), to: powerLog)
                }
            } catch {
                throw Self.failure(String(describing: error))
            }
            if json {
                print(try SimulationOutput.json(result, request: request, input: input))
            } else {
                print(SimulationOutput.summary(result, request: request, input: input))
            }
        }
    }
}

extension Tern.Simulate {
    /// Prints `Error: message` on stderr and returns the exit code to throw (1).
    static func failure(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
        return ExitCode(1)
    }
}

/// `--policy`.
enum SimulationPolicyName: String, CaseIterable, ExpressibleByArgument {
    case alwaysOn = "always-on", fixed, adaptive

    init?(argument: String) { self.init(rawValue: argument) }
}

/// `--receiver`.
enum SimulationReceiverName: String, CaseIterable, ExpressibleByArgument {
    case mt3339, ubloxM8 = "ublox-m8"

    init?(argument: String) { self.init(rawValue: argument) }

    var model: ReceiverModel {
        switch self {
        case .mt3339: .mt3339
        case .ubloxM8: .ubloxM8
        }
    }
}

/// What to simulate: a trace and where the sky is missing.
struct SimulationInput {
    var trace: Trace
    var noSky: [ClosedRange<Double>]
    /// Points in the file (or trace) and how many had no time (GPX).
    var points: Int
    var untimed: Int
}

/// `tern simulate`'s arguments, checked: exactly one of trace and scenario, the options that fit
/// the policy, positive durations and budget.
struct SimulationRequest: Equatable {
    enum Source: Equatable {
        case file(String)
        case scenario(String)
    }

    /// What `--config` set: the daemon's core configuration (scheduler, filter, commit window).
    struct Configured: Equatable {
        var path: String
        var core: GatewayCore.Configuration
    }

    var source: Source
    var policy: FixPolicy
    var receiver: SimulationReceiverName
    var seed: UInt64
    var restarts: [Double] = []
    var remembers = true
    /// `--config FILE` was given: `configured(by:path:)` sets the policy, the filter and (unless
    /// `--receiver` was given) the receiver from it.
    var configPath: String?
    var receiverGiven = true
    var configured: Configured?

    static let defaultInterval = Duration.seconds(60)
    /// The shipped adaptive policy's (one set of defaults: `FixPolicy.shipped`).
    static let defaultErrorBudget = FixPolicy.shippedErrorBudget
    static let defaultMaxInterval = FixPolicy.shippedMaxInterval
    static let defaultMinInterval = FixPolicy.shippedMinInterval

    init(
        trace: String?, scenario: String?, policy: SimulationPolicyName?, interval: Duration? = nil, errorBudget: String? = nil,
        maxInterval: Duration? = nil, minInterval: Duration? = nil, receiver: SimulationReceiverName?, seed: UInt64 = 1,
        restarts: [Double] = [], remembers: Bool = true, configPath: String? = nil
    ) throws {
        self.restarts = restarts
        self.remembers = remembers
        self.configPath = configPath
        switch (trace, scenario) {
        case let (path?, nil): source = .file(path)
        case let (nil, name?):
            guard Scenario.named(name) != nil else {
                throw ValidationError("unknown scenario '\(name)': use one of \(Scenario.names.joined(separator: ", "))")
            }
            source = .scenario(name)
        case (nil, nil): throw ValidationError("give a trace: --trace FILE (.gpx or .csv) or --scenario \(Scenario.names.joined(separator: "|"))")
        case (.some, .some): throw ValidationError("--trace and --scenario exclude each other: give one")
        }
        self.seed = seed
        self.receiver = receiver ?? .mt3339
        receiverGiven = receiver != nil
        if configPath != nil {
            let given = [("--policy", policy != nil), ("--interval", interval != nil), ("--error-budget", errorBudget != nil),
                         ("--max-interval", maxInterval != nil), ("--min-interval", minInterval != nil)]
            if let (option, _) = given.first(where: { $0.1 }) {
                throw ValidationError("\(option) and --config exclude each other: the configuration's [scheduler] sets the policy (edit it, or leave out --config)")
            }
            self.policy = .shipped  // until `configured(by:path:)`
            return
        }
        guard let policy else { throw ValidationError("give --policy always-on|fixed|adaptive, or --config FILE") }
        guard receiver != nil else { throw ValidationError("give --receiver mt3339|ublox-m8 (or --config FILE, whose receiver is the default)") }
        func reject(_ present: Bool, _ option: String, _ why: String) throws {
            if present { throw ValidationError("\(option) does not apply to --policy \(policy.rawValue): \(why)") }
        }
        switch policy {
        case .alwaysOn:
            let why = "the receiver stays on"
            try reject(interval != nil, "--interval", why)
            try reject(errorBudget != nil, "--error-budget", why)
            try reject(maxInterval != nil, "--max-interval", why)
            try reject(minInterval != nil, "--min-interval", why)
            self.policy = .alwaysOn
        case .fixed:
            let why = "it only takes --interval"
            try reject(errorBudget != nil, "--error-budget", why)
            try reject(maxInterval != nil, "--max-interval", why)
            try reject(minInterval != nil, "--min-interval", why)
            let interval = interval ?? Self.defaultInterval
            guard interval > .zero else { throw ValidationError("--interval must be positive (for no gaps use --policy always-on)") }
            self.policy = .fixed(interval: interval)
        case .adaptive:
            try reject(interval != nil, "--interval", "it chooses its own intervals (bound them with --min-interval and --max-interval)")
            let budget = try errorBudget.map(Self.metres) ?? Self.defaultErrorBudget
            let maximum = maxInterval ?? Self.defaultMaxInterval
            let minimum = minInterval ?? min(Self.defaultMinInterval, maximum)
            guard minimum > .zero else { throw ValidationError("--min-interval must be positive") }
            guard maximum >= minimum else {
                throw ValidationError("--max-interval (\(DurationText.format(maximum))) must be at least --min-interval (\(DurationText.format(minimum)))")
            }
            self.policy = .adaptive(errorBudget: budget, minInterval: minimum, maxInterval: maximum)
        }
    }

    /// The request with `config` (read from `path`) in force: its policy, its filter, its acquisition
    /// timeout and accuracy target, and its receiver unless `--receiver` was given.
    func configured(by config: TernConfig, path: String) -> SimulationRequest {
        var request = self
        request.policy = config.scheduler.policy
        if !receiverGiven { request.receiver = config.scheduler.energy == ReceiverModel.ubloxM8.energy ? .ubloxM8 : .mt3339 }
        request.configured = Configured(path: path, core: config.core)
        return request
    }

    /// The scheduler options the run uses: the configuration's (on the simulated receiver's energy
    /// figures), else those `options` derive.
    func schedulerOptions(_ options: SimulationOptions) -> FixScheduler.Options {
        guard var scheduler = configured?.core.scheduler else { return options.schedulerOptions }
        scheduler.energy = options.receiver.energy
        return scheduler
    }

    /// A distance in metres: "30m", "30", "0.5km".
    static func metres(_ text: String) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let value: Double? =
            if trimmed.hasSuffix("km") { Double(trimmed.dropLast(2)).map { $0 * 1000 } }
            else if trimmed.hasSuffix("m") { Double(trimmed.dropLast()) }
            else { Double(trimmed) }
        guard let value, value.isFinite, value > 0 else {
            throw ValidationError("expected a positive distance in metres such as 30m or 0.5km, got '\(text)'")
        }
        return value
    }

    /// Loads the trace (or builds the scenario).
    func input() throws -> SimulationInput {
        switch source {
        case let .file(path):
            let file = try TraceLoader.load(path: path)
            return SimulationInput(trace: file.trace, noSky: [], points: file.pointCount, untimed: file.untimedCount)
        case let .scenario(name):
            guard let scenario = Scenario.named(name) else { throw ValidationError("unknown scenario '\(name)'") }
            return SimulationInput(
                trace: scenario.trace, noSky: scenario.noSky, points: scenario.trace.points.count, untimed: 0)
        }
    }

    func options(noSky: [ClosedRange<Double>]) -> SimulationOptions {
        // The shipped filter (warm-up, thinning), its thinning tolerance following the budget as
        // TernConfig makes it.
        var options = SimulationOptions(
            policy: policy, receiver: receiver.model, seed: seed,
            acquisitionTimeout: configured?.core.scheduler.acquisitionTimeout ?? FixScheduler.Options.shipped.acquisitionTimeout,
            accuracyTarget: configured?.core.scheduler.accuracyTarget ?? FixScheduler.Options.shipped.accuracyTarget, noSky: noSky,
            filter: configured?.core.filter ?? .init(thinning: .init(rule: .errorBudget(tolerance: policy.thinningTolerance))),
            restarts: restarts, remembers: remembers)
        if let configured { options.commitWindow = configured.core.commitWindow }
        return options
    }

    /// "adaptive (error budget 30 m, intervals 5s–15m)", "fixed (every 60s)", "always-on".
    var policyDescription: String {
        switch policy {
        case .alwaysOn: "always-on"
        case let .fixed(interval): "fixed (every \(DurationText.format(interval)))"
        case let .adaptive(budget, minimum, maximum):
            "adaptive (error budget \(SimulationOutput.trimmed(budget)) m, intervals \(DurationText.format(minimum))–\(DurationText.format(maximum)))"
        }
    }
}

/// Renders a `SimulationResult`: the summary, the JSON object, the CSV files.
enum SimulationOutput {
    /// Keys added to the result's own JSON.
    static func json(_ result: SimulationResult, request: SimulationRequest, input: SimulationInput) throws -> String {
        let encoded = try JSONEncoder().encode(result)
        guard var object = try JSONSerialization.jsonObject(with: encoded) as? [String: Any] else {
            throw ValidationError("internal error: the result did not encode as a JSON object")
        }
        object["trace"] = input.trace.name
        object["trace_points"] = input.points
        object["receiver"] = request.receiver.rawValue
        object["seed"] = request.seed
        if let configured = request.configured { object["config"] = configured.path }
        object["no_sky_s"] = input.noSky.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
        var policy: [String: Any] = [:]
        switch request.policy {
        case .alwaysOn: policy["name"] = "always-on"
        case let .fixed(interval):
            policy["name"] = "fixed"
            policy["interval_s"] = interval.seconds
        case let .adaptive(budget, minimum, maximum):
            policy["name"] = "adaptive"
            policy["error_budget_m"] = budget
            policy["min_interval_s"] = minimum.seconds
            policy["max_interval_s"] = maximum.seconds
        }
        object["policy"] = policy
        let data = try JSONOutput.data(object, pretty: false)
        return String(decoding: data, as: UTF8.self)
    }

    static func summary(_ result: SimulationResult, request: SimulationRequest, input: SimulationInput) -> String {
        let duration = max(result.durationS, input.trace.duration)
        let onShare = duration > 0 ? result.receiverOnS / duration * 100 : 0
        var lines = [
            "Simulated \(input.trace.name) (\(hours(duration)), \(input.trace.points.count) points) on \(request.receiver.rawValue), \(request.policyDescription)\(request.configured.map { " from \($0.path)" } ?? ""), seed \(request.seed)",
            "  receiver on            \(Int(result.receiverOnS.rounded())) s of \(Int(duration.rounded())) s (\(number(onShare, 1)) %), \(result.cycles) power cycles",
            "  energy                 \(number(result.energyMJ / 1000, 2)) J",
            "  fixes tried / accepted \(result.fixesAttempted) / \(result.fixesAccepted)",
            "  starts hot/warm/cold   \(result.starts.hot) / \(result.starts.warm) / \(result.starts.cold)",
            "  error p50 / p95 / max  \(number(result.errorM.p50, 1)) / \(number(result.errorM.p95, 1)) / \(number(result.errorM.max, 1)) m",
            "  p95 with sky           \(number(result.errorSkyM.p95, 1)) m accepted, \(number(result.errorStoredSkyM.p95, 1)) m stored (\(result.fixesStored) positions: what the server shows)",
            "  energy per fix         \(number(result.energyPerFixMJ, 1)) mJ (floor \(number(result.floorMJ, 1)) mJ, ×\(number(result.floorRatio, 2)); median cycle \(number(result.medianCycleMJ, 1)) mJ)",
            "  ephemeris refreshes    \(result.ephemerisRefreshes), timeouts \(result.timeouts)",
        ]
        if !input.noSky.isEmpty {
            let seconds = input.noSky.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
            lines.append("  no sky                 \(Int(seconds)) s in \(input.noSky.count) spans")
        }
        if input.untimed > 0 {
            lines.append("  skipped                \(input.untimed) trace points without a time")
        }
        return lines.joined(separator: "\n")
    }

    /// `time,lat,lon,accuracy_m`: ISO-8601 UTC (milliseconds), degrees (7 decimals), metres (empty when unknown).
    static func fixesCSV(_ result: SimulationResult, start: Date) -> String {
        var text = "time,lat,lon,accuracy_m\n"
        for fix in result.acceptedFixes {
            let accuracy = fix.accuracy.map { number($0, 2) } ?? ""
            text += "\(timestamp(start.addingTimeInterval(fix.time))),\(number(fix.latitude, 7)),\(number(fix.longitude, 7)),\(accuracy)\n"
        }
        return text
    }

    /// `time,state`: seconds since the trace start (milliseconds), and the state entered.
    static func powerLogCSV(_ result: SimulationResult) -> String {
        var text = "time,state\n"
        for entry in result.powerLog {
            text += "\(number(entry.time, 3)),\(entry.state.rawValue)\n"
        }
        return text
    }

    struct WriteError: Error, CustomStringConvertible {
        var description: String
    }

    static func write(_ text: String, to path: String) throws(WriteError) {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            let directory = (path as NSString).deletingLastPathComponent
            let why = FileManager.default.fileExists(atPath: directory.isEmpty ? "." : directory) ? "permission denied?" : "no such directory"
            throw WriteError(description: "cannot write \(path) (\(why))")
        }
    }

    /// `2026-03-02T07:30:00.000Z`.
    static func timestamp(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = millis - seconds * 1000
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil from days (Howard Hinnant).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 3))Z"
    }

    static func hours(_ seconds: Double) -> String {
        seconds >= 3600 ? "\(number(seconds / 3600, 1)) h" : "\(number(seconds / 60, 1)) min"
    }

    /// "30" for 30.0, "12.5" for 12.5.
    static func trimmed(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Fixed decimals, no locale; trailing zeros kept.
    static func number(_ value: Double, _ places: Int = 0) -> String {
        String(format: "%.\(places)f", value)
    }
}
