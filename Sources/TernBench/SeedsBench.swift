import ArgumentParser
import Foundation
import TernCore
import TernSimulation

/// `tern-bench seeds`: `tern-bench policy` over several seeds, summarised: how often each target of
/// issue 13 is met, and how often each policy keeps a moving trace within the budget. One seed's
/// figures turn on a few heavy-tailed errors; the spread shows what holds from one draw to the next.
struct SeedsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seeds",
        abstract: "The policy benchmark over several seeds: each target's pass count, median and worst; p95 failures per policy.",
        discussion: """
            Runs what `tern-bench policy` runs (same options) once per seed in --seeds (a list such as \
            1,2,7 or a range such as 1-8). For each target: the seeds that meet it, the median and the \
            worst value. For adaptive and the fixed intervals of 10, 15, 30 and 60 s: the moving-trace \
            runs (trace × receiver × seed) whose track-error p95 exceeds the budget, and their energy \
            summed over every run relative to the fixed 15 s interval's. Per motion class (and pooled \
            over the moving runs), by the stored track's p95: adaptive's runs within the budget, the \
            cheapest fixed interval within it at least as often, and adaptive's energy over that one's. Prints JSON, or --markdown; \
            --check exits 1 when a required target is missed on any seed. --seed is not used (--seeds is).
            """)

    @OptionGroup var policy: PolicyBench

    @Option(help: "Seeds: a comma-separated list and/or ranges, e.g. 1-8 or 1,2,7.")
    var seeds: String = "1-8"

    /// The fixed intervals compared (15 s among them: the energy yardstick).
    static let comparedIntervals: [Double] = [10, 15, 30, 60]

    func validate() throws { _ = try seedList() }

    func seedList() throws -> [UInt64] {
        var list: [UInt64] = []
        for part in seeds.split(separator: ",") {
            let numbers = part.split(separator: "-", omittingEmptySubsequences: false)
                .map { UInt64($0.trimmingCharacters(in: .whitespaces)) }
            switch (numbers.count, numbers.first ?? nil, numbers.last ?? nil) {
            case let (1, seed?, _):
                list.append(seed)
            case let (2, low?, high?) where low <= high:
                list += Array(low...high)
            default:
                throw ValidationError("--seeds: '\(part)' is neither a seed nor a range A-B (e.g. 1-8 or 1,2,7)")
            }
        }
        guard !list.isEmpty else { throw ValidationError("--seeds is empty") }
        return list
    }

    func run() throws {
        let inputs = policy.loadInputs()
        let reports = try seedList().map { try policy.report(inputs: inputs, seed: $0) }
        let summary = SeedsSummary(reports: reports, budget: policy.budget, intervals: Self.comparedIntervals)
        if policy.markdown {
            print(summary.markdown())
        } else {
            let data = try JSONOutput.data(summary.json())
            print(String(decoding: data, as: UTF8.self))
        }
        let missed = summary.targets.filter { !$0.stretch && $0.met < summary.seeds.count }
        if policy.check, !missed.isEmpty {
            for t in missed {
                FileHandle.standardError.write(Data("tern-bench: target missed on \(summary.seeds.count - t.met) of \(summary.seeds.count) seeds: \(t.receiver): \(t.name)\n".utf8))
            }
            throw ExitCode(1)
        }
    }
}

/// What several seeds' policy reports have in common.
struct SeedsSummary {
    struct TargetSpread {
        var name: String
        var receiver: String
        var stretch: Bool
        var limit: Double
        var met: Int
        var values: [Double]

        var middle: Double? { values.isEmpty ? nil : Statistics.median(values) }
        /// Every target is an upper limit: the worst value is the largest.
        var worst: Double? { values.max() }
    }

    struct PolicyFailures {
        /// nil: adaptive.
        var fixedInterval: Double?
        /// The receiver's runs only; nil: both receivers'.
        var receiver: String?
        /// Runs whose accepted track's p95 exceeded the budget, and whose stored track's (what the
        /// server shows) did.
        var overBudget = 0
        var overBudgetStored = 0
        var runs = 0
        var energyMJ = 0.0

        var name: String { fixedInterval.map { "fixed \(Int($0)) s" } ?? "adaptive" }
        /// Share of the moving runs whose p95 stayed within the budget: the accepted track, the stored one.
        var withinBudget: Double { runs > 0 ? Double(runs - overBudget) / Double(runs) : 0 }
        var withinBudgetStored: Double { runs > 0 ? Double(runs - overBudgetStored) / Double(runs) : 0 }

        mutating func add(_ result: SimulationResult, budget: Double) {
            runs += 1
            overBudget += result.errorSkyM.p95 > budget ? 1 : 0
            overBudgetStored += result.errorStoredSkyM.p95 > budget ? 1 : 0
            energyMJ += result.energyMJ
        }
    }

    /// Adaptive and fixed intervals over one group of runs (a receiver's, a motion class's, …).
    struct PolicyGroup {
        var adaptive: PolicyFailures
        var fixed: [PolicyFailures]

        init(receiver: String?, intervals: [Double]) {
            adaptive = PolicyFailures(fixedInterval: nil, receiver: receiver)
            fixed = intervals.map { PolicyFailures(fixedInterval: $0, receiver: receiver) }
        }

        mutating func add(_ row: PolicyReport.Row, budget: Double) {
            adaptive.add(row.adaptive, budget: budget)
            for index in fixed.indices {
                guard let result = row.fixed.first(where: { $0.interval == fixed[index].fixedInterval })?.result else { continue }
                fixed[index].add(result, budget: budget)
            }
        }
    }

    /// Runs of one motion class (or every moving run, pooled), every seed and receiver: adaptive and
    /// every fixed interval of `PolicyReport.fixedIntervals`, judged by the stored track.
    struct ClassSpread {
        /// nil: every moving run, pooled.
        var motionClass: MotionClass?
        var group = PolicyGroup(receiver: nil, intervals: PolicyReport.fixedIntervals)

        var adaptive: PolicyFailures { group.adaptive }
        var name: String { motionClass?.rawValue ?? "moving (pooled)" }
        /// The cheapest fixed interval whose stored track keeps the budget in at least as many runs as
        /// adaptive's: the fair yardstick of issue 34 (nil: none is as accurate).
        var cheapestAsAccurate: PolicyFailures? {
            group.fixed.filter { $0.runs - $0.overBudgetStored >= adaptive.runs - adaptive.overBudgetStored }
                .min { $0.energyMJ < $1.energyMJ }
        }
        var adaptiveOverCheapestAsAccurate: Double? { cheapestAsAccurate.map { ratio(adaptive.energyMJ, $0.energyMJ) } }

        func json() -> [String: Any] {
            func policy(_ p: PolicyFailures) -> [String: Any] {
                [
                    "policy": p.name, "runs": p.runs, "within_budget_stored": p.runs - p.overBudgetStored,
                    "within_budget_stored_share": round(p.withinBudgetStored, 4), "energy_mj": round(p.energyMJ, 1),
                ]
            }
            return [
                "class": name, "runs": adaptive.runs, "policies": [policy(adaptive)] + group.fixed.map(policy),
                "cheapest_fixed_as_accurate": cheapestAsAccurate.map(\.name) ?? NSNull(),
                "adaptive_over_cheapest_fixed_as_accurate": adaptiveOverCheapestAsAccurate.map { round($0, 4) } ?? NSNull(),
            ]
        }
    }

    var seeds: [UInt64]
    var targets: [TargetSpread] = []
    /// Pooled over the moving runs, then per motion class present (parked included).
    var classes: [ClassSpread] = []
    /// Over both receivers, then per receiver (`receivers`), each adaptive then the fixed intervals.
    var policies: [PolicyFailures] = []
    var receivers: [String] = []
    /// What fixed 15 s spent over the moving runs of `receiver` (nil: both): the energy yardstick.
    func fixed15MJ(receiver: String? = nil) -> Double {
        policies.first { $0.fixedInterval == 15 && $0.receiver == receiver }?.energyMJ ?? 0
    }

    init(reports: [PolicyReport], budget: Double, intervals: [Double]) {
        seeds = reports.map(\.settings.seed)
        for report in reports {
            for target in report.targets {
                if let index = targets.firstIndex(where: { $0.name == target.name && $0.receiver == target.receiver && $0.stretch == target.stretch }) {
                    targets[index].met += target.met ? 1 : 0
                    if let value = target.value { targets[index].values.append(value) }
                } else {
                    targets.append(
                        TargetSpread(
                            name: target.name, receiver: target.receiver, stretch: target.stretch, limit: target.limit,
                            met: target.met ? 1 : 0, values: target.value.map { [$0] } ?? []))
                }
            }
        }
        let all = reports.flatMap(\.rows)
        var pooled = ClassSpread(motionClass: nil)
        for row in all where row.input.isMoving { pooled.group.add(row, budget: budget) }
        classes = [pooled]
        for motion in MotionClass.allCases {
            var spread = ClassSpread(motionClass: motion)
            for row in all where row.input.motionClass == motion { spread.group.add(row, budget: budget) }
            if spread.adaptive.runs > 0 { classes.append(spread) }
        }
        let rows = all.filter(\.input.isMoving)
        receivers = rows.reduce(into: [String]()) { if !$0.contains($1.receiver.name) { $0.append($1.receiver.name) } }
        for receiver in [nil] + receivers.map(Optional.some) {
            var group = PolicyGroup(receiver: receiver, intervals: intervals)
            for row in rows where receiver == nil || row.receiver.name == receiver { group.add(row, budget: budget) }
            policies += [group.adaptive] + group.fixed
        }
    }

    func json() -> [String: Any] {
        [
            "benchmark": "policy-seeds",
            "seeds": seeds.map { Int($0) },
            "targets": targets.map { t in
                [
                    "name": t.name, "receiver": t.receiver, "stretch": t.stretch, "limit": t.limit, "met_seeds": t.met,
                    "median": t.middle.map { round($0, 4) as Any } ?? NSNull(),
                    "worst": t.worst.map { round($0, 4) as Any } ?? NSNull(),
                ] as [String: Any]
            },
            "p95_over_budget": policies.map { p in
                [
                    "policy": p.name, "receiver": p.receiver ?? "both", "runs": p.runs, "over_budget": p.overBudget,
                    "within_budget_share": round(p.withinBudget, 4),
                    "over_budget_stored": p.overBudgetStored, "within_budget_stored_share": round(p.withinBudgetStored, 4),
                    "energy_over_fixed_15s": round(ratio(p.energyMJ, fixed15MJ(receiver: p.receiver)), 4),
                ] as [String: Any]
            },
            "motion_classes": classes.map { $0.json() },
        ]
    }

    func markdown() -> String {
        var lines = [
            "Seeds \(seeds.map(String.init).joined(separator: ", ")).", "",
            "| target | receiver | met (seeds) | median | worst |", "|---|---|---:|---:|---:|",
        ]
        for t in targets where !t.stretch {
            let mid = t.middle.map { String(round($0, 3)) } ?? "n/a"
            let worst = t.worst.map { String(round($0, 3)) } ?? "n/a"
            lines.append("| \(t.name) (≤ \(round(t.limit, 3))) | \(t.receiver) | \(t.met) of \(seeds.count) | \(mid) | \(worst) |")
        }
        // Each policy's energy beside the share of moving runs it kept within the budget: per receiver
        // (energy relative to that receiver's fixed 15 s), then both.
        let columns = receivers + ["both"]
        lines += [
            "", "| policy | " + columns.map { "\($0): runs within budget, accepted | stored | energy / fixed 15 s" }.joined(separator: " | ") + " |",
            "|---|" + columns.map { _ in "---:|---:|---:" }.joined(separator: "|") + "|",
        ]
        for p in policies where p.receiver == nil {
            let cells = columns.map { column -> String in
                let receiver = column == "both" ? nil : column
                guard let q = policies.first(where: { $0.fixedInterval == p.fixedInterval && $0.receiver == receiver }) else { return "n/a | n/a | n/a" }
                return "\(q.runs - q.overBudget) of \(q.runs) (\(Int((q.withinBudget * 100).rounded())) %) | "
                    + "\(q.runs - q.overBudgetStored) of \(q.runs) (\(Int((q.withinBudgetStored * 100).rounded())) %) | "
                    + String(format: "%.3f", ratio(q.energyMJ, fixed15MJ(receiver: receiver)))
            }
            lines.append("| \(p.name) | " + cells.joined(separator: " | ") + " |")
        }
        // Per motion class, judged by the stored track: adaptive against the cheapest fixed interval
        // that keeps the budget as often (the parked runs are three days each: their own class).
        lines += [
            "", "| motion class | runs | adaptive: stored within budget | cheapest fixed as accurate | its runs within budget | adaptive / its energy |",
            "|---|---:|---:|---|---:|---:|",
        ]
        for c in classes {
            let a = c.adaptive
            let cheapest = c.cheapestAsAccurate
            lines.append(
                "| \(c.name) | \(a.runs) | \(a.runs - a.overBudgetStored) (\(Int((a.withinBudgetStored * 100).rounded())) %) | "
                    + "\(cheapest?.name ?? "none is") | \(cheapest.map { "\($0.runs - $0.overBudgetStored)" } ?? "n/a") | "
                    + "\(c.adaptiveOverCheapestAsAccurate.map { String(format: "%.3f", $0) } ?? "n/a") |")
        }
        return lines.joined(separator: "\n")
    }
}
