import ArgumentParser
import Foundation
import Synchronization
import TernCore
import TernSimulation

/// `tern-bench policy`: Tern's adaptive scheduler against always-on and the best-tuned naive fixed
/// interval, on every ground-truth trace and the synthetic scenarios, for each receiver model.
struct PolicyBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Energy and track error of the duty-cycling policies on the ground-truth traces and scenarios.",
        discussion: """
            For every *.gpx/*.csv trace in --traces (name order; its motion class from the \
            directory's \(MotionClass.manifestName), lines 'FILE CLASS') plus the scenarios commute, \
            indoor and parked-3-days (unless --no-scenarios), and for each receiver, simulates (virtual time, seed --seed): \
            always-on; fixed at every interval of \(PolicyReport.fixedIntervals.map { "\(Int($0))" }.joined(separator: ", ")) s; \
            and adaptive (--budget, --min-interval, --max-interval). "Best tuned fixed" is the \
            largest interval whose track-error p95 is within the budget (when none is, the \
            smallest, flagged). Prints one JSON object: a row per trace × receiver, per-receiver \
            totals over the moving traces (every input but the parked one), and the targets of \
            issue 13: adaptive ≤ 0.25 × the one fixed interval that keeps every moving trace within \
            the budget and ≤ 0.85 × the per-trace best fixed interval (0.67 ×, the two-rate bound of \
            `bounds`, reported as a stretch), both summed per receiver; parked: every day after the \
            first ≤ 1 % of always-on, the first (from a cold boot) ≤ 1.2 %, the departure noticed \
            within 15 min; p95 ≤ the budget on every moving trace. \
            --markdown prints a table for docs/scheduling.md instead; --check exits 1 when a target fails.
            """)

    @Option(help: "Directory of ground-truth traces (*.gpx, *.csv).")
    var traces: String = "Tests/TernSimulationTests/Traces"

    @Option(help: "Comma-separated receiver models: mt3339, ublox-m8.")
    var receivers: String = "mt3339,ublox-m8"

    @Option(help: "Error budget, metres: adaptive's target and the bar the best fixed interval must meet.")
    var budget: Double = 30

    @Option(help: "Adaptive's longest interval between fixes, seconds.")
    var maxInterval: Double = 900

    @Option(help: "Adaptive's shortest interval between fixes, seconds.")
    var minInterval: Double = 5

    @Option(help: "Random seed of the simulated receivers.")
    var seed: UInt64 = 1

    @Flag(help: "Print a Markdown table (for docs/scheduling.md) instead of JSON.")
    var markdown = false

    @Flag(help: "Exit 1 when a target is missed (the report is printed first).")
    var check = false

    @Option(help: ArgumentHelp("Experiment: the adaptive scheduler's moveBudgetShare.", visibility: .hidden))
    var moveBudgetShare: Double?

    @Option(help: ArgumentHelp("Experiment: the filter's warm-up, seconds.", visibility: .hidden))
    var warmUp: Double?

    @Option(help: ArgumentHelp("Experiment: the adaptive scheduler's settle time, seconds (longer than the warm-up).", visibility: .hidden))
    var settleTime: Double?

    @Option(help: ArgumentHelp("Experiment: the adaptive scheduler's corner memory, metres (0: a turn shortens only the next leg).", visibility: .hidden))
    var cornerMemory: Double?

    @Option(help: ArgumentHelp("Experiment: the adaptive scheduler's stop risk (legs ≤ this × budget / speed).", visibility: .hidden))
    var stopRisk: Double?

    @Flag(help: ArgumentHelp("Experiment: settle off: adaptive takes the first fix past the warm-up, whatever its estimate.", visibility: .hidden))
    var noSettle = false

    @Flag(help: "Only the trace files (no commute, indoor and parked scenarios): for held-out trajectories.")
    var noScenarios = false

    func validate() throws {
        guard budget > 0 else { throw ValidationError("--budget must be positive") }
        guard minInterval >= 1 else { throw ValidationError("--min-interval must be at least 1") }
        guard maxInterval >= minInterval else { throw ValidationError("--max-interval must be at least --min-interval") }
        let warmUpSeconds = warmUp ?? StandardLocationFilter.Options().warmUp.seconds
        if noSettle, settleTime != nil { throw ValidationError("--no-settle takes no --settle-time: it waits for no better fix") }
        if let settleTime, settleTime <= warmUpSeconds {
            // The fallback would come before any fix is past the warm-up: no fix at all, not "settle off".
            throw ValidationError("--settle-time must be longer than the warm-up (\(warmUpSeconds) s): a shorter one takes no fix")
        }
        _ = try models()
    }

    func models() throws -> [ReceiverModel] {
        let names = receivers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.isEmpty else { throw ValidationError("--receivers is empty") }
        return try names.map { name in
            guard let model = ReceiverModel.all.first(where: { $0.name == name }) else {
                throw ValidationError("unknown receiver '\(name)': use \(ReceiverModel.all.map(\.name).joined(separator: ", "))")
            }
            return model
        }
    }

    func run() throws {
        let started = monotonicSeconds()
        let inputs = loadInputs()
        let report = try report(inputs: inputs, seed: seed)
        if markdown {
            print(report.markdown())
        } else {
            var json = report.json()
            json["host"] = [
                "cpus": ProcessInfo.processInfo.activeProcessorCount, "os": osName(),
                "simulations": report.rows.count * report.settings.policies.count, "wall_s": round(monotonicSeconds() - started, 2),
            ] as [String: Any]
            let data = try JSONOutput.data(json)
            print(String(decoding: data, as: UTF8.self))
        }
        if check, !report.allTargetsMet {
            for target in report.targets where !target.met && !target.stretch {
                FileHandle.standardError.write(Data("tern-bench: target missed: \(target.summary)\n".utf8))
            }
            throw ExitCode(1)
        }
    }

    /// Every input × receiver × policy simulated with `seed` (in parallel), and the report on them.
    func report(inputs: [PolicyInput], seed: UInt64) throws -> PolicyReport {
        let models = try models()
        let settings = PolicyReport.Settings(
            budget: budget, minInterval: minInterval, maxInterval: maxInterval, seed: seed, receivers: models.map(\.name))
        let jobs = inputs.flatMap { input in
            models.flatMap { model in settings.policies.map { PolicyJob(input: input, model: model, policy: $0, budget: budget) } }
        }
        let results = Mutex([SimulationResult?](repeating: nil, count: jobs.count))
        let tuning = (moveBudgetShare: moveBudgetShare, warmUp: warmUp, settleTime: settleTime, noSettle: noSettle, cornerMemory: cornerMemory, stopRisk: stopRisk)
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let job = jobs[index]
            // The daemon's default filter: its rules, and thinning by the budget.
            var filter = StandardLocationFilter.Options(thinning: .init(rule: .errorBudget(tolerance: job.budget)))
            if let seconds = tuning.warmUp { filter.warmUp = .seconds(seconds) }
            let options = SimulationOptions(policy: job.policy, receiver: job.model, seed: seed, noSky: job.input.noSky, filter: filter)
            var scheduler = options.schedulerOptions
            if let share = tuning.moveBudgetShare { scheduler.tuning.moveBudgetShare = share }
            if let seconds = tuning.settleTime { scheduler.tuning.settleTime = .seconds(seconds) }
            // Every fix past the warm-up is good enough: the first one is taken (rule 1 without settling).
            if tuning.noSettle { scheduler.accuracyTarget = .infinity }
            if let metres = tuning.cornerMemory { scheduler.tuning.cornerMemory = metres }
            if let risk = tuning.stopRisk { scheduler.tuning.stopRisk = risk }
            let result = simulate(trace: job.input.trace, options: options, scheduler: scheduler)
            results.withLock { $0[index] = result }
        }
        let runs = results.withLock { all in
            zip(jobs, all).compactMap { job, result in result.map { PolicyRun(job: job, result: $0) } }
        }
        return PolicyReport(settings: settings, inputs: inputs, runs: runs)
    }

    /// The trace files (name order), then the scenarios.
    func loadInputs() -> [PolicyInput] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: traces))?
            .filter { $0.hasSuffix(".gpx") || $0.hasSuffix(".csv") }.sorted() ?? []
        guard !names.isEmpty else {
            fail("no *.gpx or *.csv traces in \(traces) (run from the package root, or pass --traces DIR)", code: 2)
        }
        let classes: [String: MotionClass]
        do {
            classes = try MotionClass.manifest(in: traces)
        } catch {
            fail("\(error)", code: 2)
        }
        var inputs: [PolicyInput] = []
        for name in names {
            do {
                let file = try TraceLoader.load(path: traces + "/" + name)
                inputs.append(
                    PolicyInput(trace: file.trace, noSky: [], departure: nil, kind: .file, motionClass: classes[name] ?? .unclassified))
            } catch {
                fail(error.description, code: 2)
            }
        }
        // The parked targets are per day over three days (`parked-3-days`); `parked-day` is its first day.
        let scenarios: [(Scenario, MotionClass)] = [(.commute, .car), (.indoor, .walkCycle), (.parkedThreeDays, .parked)]
        for (scenario, motion) in noScenarios ? [] : scenarios {
            inputs.append(
                PolicyInput(
                    trace: scenario.trace, noSky: scenario.noSky, departure: scenario.departure,
                    kind: scenario.departure == nil ? .scenario : .parked, motionClass: motion))
        }
        return inputs
    }
}

/// A trace the benchmark runs, and what kind it is.
struct PolicyInput: Sendable {
    enum Kind: String, Sendable {
        /// A ground-truth file.
        case file
        /// A moving synthetic scenario.
        case scenario
        /// The parked day: stationary until `departure`; kept out of the moving totals.
        case parked
    }

    var trace: Trace
    var noSky: [ClosedRange<Double>]
    var departure: Double?
    var kind: Kind
    /// From the trace directory's `motion-classes.txt`; the scenarios': commute a car (its last 5 km
    /// by bike), indoor a walk, parked-3-days parked.
    var motionClass: MotionClass

    var isMoving: Bool { kind != .parked }
}

struct PolicyJob: Sendable {
    var input: PolicyInput
    var model: ReceiverModel
    var policy: FixPolicy
    var budget: Double
}

struct PolicyRun {
    var job: PolicyJob
    var result: SimulationResult
}
