import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernSimulation

/// `tern-bench timing`: how much a run's schedule depends on timing the device does not control (where
/// the GPS's second falls in Tern's schedule, how late each power-on takes effect).
struct TimingBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timing",
        abstract: "The spread of the shipped configuration's schedule over the GPS's epoch phase and power-on lags.",
        discussion: """
            Runs `simulate` with the shipped configuration (board/simulated.toml as the daemon loads it) \
            on each --trace (FILE:MINUTES, the first MINUTES of it) with each receiver, at every \
            --phases place of the GPS's second in the schedule: once with no lag, then --draws times \
            with each power-on lagged uniformly in [0, --max-lag] s. Prints JSON: per run, the power \
            cycles and the positions stored as value -> number of runs, and the energy's min, median and \
            max. The defaults are the cross-check's four traces and seed.
            """)

    @Option(name: .customLong("trace"), help: "FILE:MINUTES (repeatable; default: the cross-check's four).")
    var traces: [String] = [
        "Tests/TernSimulationTests/Traces/around-visnjan-with-car.gpx:8.6", "Tests/TernSimulationTests/Traces/cerknicko-jezero.gpx:12",
        "Tests/TernSimulationTests/Traces/ais-virginiabeach-476afeca.csv:15", "Tests/TernSimulationTests/Traces/korita-zbevnica.gpx:20",
    ]

    @Option(help: "Places of the GPS's second in the schedule, comma-separated, each in [0, 1).")
    var phases = "0,0.3,0.8,0.95"

    @Option(help: "Lagged runs per phase.")
    var draws = 100

    @Option(help: "The longest power-on lag, seconds.")
    var maxLag = 0.1

    @Option(help: "Seed of the receiver's draws (and of the lags).")
    var seed: UInt64 = 5

    func validate() throws {
        guard draws >= 0, maxLag >= 0 else { throw ValidationError("--draws and --max-lag must not be negative") }
        guard try !parsedPhases().isEmpty else { throw ValidationError("--phases needs at least one value") }
        for trace in traces where Self.split(trace) == nil { throw ValidationError("--trace \(trace): expected FILE:MINUTES") }
    }

    func run() throws {
        let config = try TernConfig.parse(SimulatedBoardProfile.text)
        var rows: [[String: Any]] = []
        for spec in traces {
            guard let (file, minutes) = Self.split(spec) else { continue }
            let full = try TraceLoader.load(path: file).trace
            let trace = Trace(name: full.name, points: full.points.filter { $0.time.timeIntervalSince(full.start) <= minutes * 60 })
            for receiver in [ReceiverModel.mt3339, .ubloxM8] {
                var scheduler = config.scheduler
                scheduler.energy = receiver.energy
                for phase in try parsedPhases() {
                    var random = SplitMix64(seed: seed)
                    var runs: [SimulationResult] = []
                    for draw in 0...draws {
                        var options = SimulationOptions(policy: scheduler.policy, receiver: receiver, seed: seed, filter: config.filter)
                        options.commitWindow = config.core.commitWindow
                        options.epochPhase = phase
                        if draw > 0 { options.powerOnDelays = (0..<2000).map { _ in Double.random(in: 0...maxLag, using: &random) } }
                        runs.append(simulate(trace: trace, options: options, scheduler: scheduler))
                    }
                    let energy = runs.map(\.energyMJ).sorted()
                    rows.append([
                        "trace": trace.name, "minutes": minutes, "receiver": receiver.name, "phase": phase,
                        "runs": runs.count, "unlagged": ["power_cycles": runs[0].cycles, "stored": runs[0].fixesStored],
                        "power_cycles": Self.histogram(runs.map(\.cycles)), "stored": Self.histogram(runs.map(\.fixesStored)),
                        "energy_mj": ["min": round(energy[0]), "median": round(energy[energy.count / 2]), "max": round(energy[energy.count - 1])],
                    ])
                }
            }
        }
        let json: [String: Any] = ["benchmark": "timing", "seed": seed, "draws": draws, "max_lag_s": maxLag, "rows": rows]
        print(String(decoding: try JSONOutput.data(json), as: UTF8.self))
    }

    private func parsedPhases() throws -> [Double] {
        try phases.split(separator: ",").map {
            guard let value = Double($0.trimmingCharacters(in: .whitespaces)), (0..<1).contains(value) else {
                throw ValidationError("--phases: \($0) is not in [0, 1)")
            }
            return value
        }
    }

    private static func split(_ spec: String) -> (file: String, minutes: Double)? {
        guard let colon = spec.lastIndex(of: ":"), let minutes = Double(spec[spec.index(after: colon)...]), minutes > 0 else { return nil }
        return (String(spec[..<colon]), minutes)
    }

    /// Each value and how many runs had it, as {"22": 18, "27": 60}.
    private static func histogram(_ values: [Int]) -> [String: Int] {
        Dictionary(grouping: values, by: { $0 }).reduce(into: [:]) { $0[String($1.key)] = $1.value.count }
    }
}
