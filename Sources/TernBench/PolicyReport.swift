import Foundation
import TernCore
import TernSimulation

/// The policy benchmark's figures from the simulation runs: rows, totals, targets, JSON, Markdown.
struct PolicyReport {
    /// The naive fixed intervals tried, seconds.
    static let fixedIntervals: [Double] = [5, 10, 15, 30, 60, 120, 300, 600, 900]

    struct Settings {
        var budget: Double
        var minInterval: Double
        var maxInterval: Double
        var seed: UInt64
        var receivers: [String]

        var adaptive: FixPolicy {
            .adaptive(errorBudget: budget, minInterval: .seconds(minInterval), maxInterval: .seconds(maxInterval))
        }

        /// Always-on, every fixed interval, adaptive.
        var policies: [FixPolicy] {
            [.alwaysOn] + PolicyReport.fixedIntervals.map { .fixed(interval: .seconds($0)) } + [adaptive]
        }
    }

    /// One trace × receiver.
    struct Row {
        var input: PolicyInput
        var receiver: ReceiverModel
        var alwaysOn: SimulationResult
        var fixed: [(interval: Double, result: SimulationResult)]
        var bestFixedInterval: Double
        /// Whether the best fixed interval meets the budget (false: none does; the smallest is used).
        var bestFixedWithinBudget: Bool
        var adaptive: SimulationResult

        var bestFixed: SimulationResult {
            fixed.first { $0.interval == bestFixedInterval }?.result ?? adaptive
        }
    }

    /// Per receiver, over the moving traces, plus the parked day.
    struct Totals {
        var receiver: ReceiverModel
        var alwaysOnMJ = 0.0
        var bestFixedMJ = 0.0
        var adaptiveMJ = 0.0
        /// Median energy of every adaptive power cycle on every input, mJ (recomputed from the power logs).
        var medianCycleMJ = 0.0
        var cycles = 0
        var floorMJ = 0.0
        var parkedAdaptiveMJ: Double?
        var parkedAlwaysOnMJ: Double?
        /// Adaptive / always-on energy per parked day (the last up to the departure), from a cold boot.
        var parkedDayRatios: [Double] = []
        /// Seconds from the departure to the first accepted fix farther than the budget from the spot.
        var departureDelay: Double?
        /// The one fixed interval a config could name for every moving trace: the longest whose p95
        /// stays within the budget on all of them (nil: none does), and its energy summed, mJ.
        var singleFixedInterval: Double?
        var singleFixedMJ = 0.0

        var adaptiveOverBestFixed: Double { ratio(adaptiveMJ, bestFixedMJ) }
        var adaptiveOverSingleFixed: Double? { singleFixedInterval.map { _ in ratio(adaptiveMJ, singleFixedMJ) } }
        var adaptiveOverAlwaysOn: Double { ratio(adaptiveMJ, alwaysOnMJ) }
        var medianCycleOverFloor: Double { ratio(medianCycleMJ, floorMJ) }
        var parkedRatio: Double? { parkedAdaptiveMJ.flatMap { a in parkedAlwaysOnMJ.map { ratio(a, $0) } } }
        var parkedFirstDayRatio: Double? { parkedDayRatios.first }
        /// The worst day after the first.
        var parkedLaterDaysRatio: Double? { parkedDayRatios.count > 1 ? parkedDayRatios.dropFirst().max() : nil }
    }

    struct Target {
        var name: String
        var receiver: String
        var value: Double?
        var limit: Double
        var met: Bool
        /// A stretch goal: reported, not required (`--check` ignores it).
        var stretch = false

        var summary: String {
            "\(receiver): \(name) = \(value.map { String(round($0, 4)) } ?? "n/a") (\(stretch ? "stretch" : "limit") \(round(limit, 4)))"
        }
    }

    let settings: Settings
    private(set) var rows: [Row] = []
    private(set) var totals: [Totals] = []
    private(set) var targets: [Target] = []

    var allTargetsMet: Bool { targets.allSatisfy { $0.met || $0.stretch } }

    init(settings: Settings, inputs: [PolicyInput], runs: [PolicyRun]) {
        self.settings = settings
        let models = settings.receivers.compactMap { name in ReceiverModel.all.first { $0.name == name } }
        for input in inputs {
            for model in models {
                let mine = runs.filter { $0.job.input.trace.name == input.trace.name && $0.job.model.name == model.name }
                guard let alwaysOn = mine.first(where: { $0.job.policy == .alwaysOn })?.result,
                    let adaptive = mine.first(where: { $0.job.policy == settings.adaptive })?.result
                else { continue }
                let fixed: [(interval: Double, result: SimulationResult)] = Self.fixedIntervals.compactMap { interval in
                    mine.first { $0.job.policy == .fixed(interval: .seconds(interval)) }.map { (interval, $0.result) }
                }
                let within = fixed.filter { $0.result.errorSkyM.p95 <= settings.budget }
                let best = within.last?.interval ?? fixed.first?.interval ?? 0
                rows.append(
                    Row(
                        input: input, receiver: model, alwaysOn: alwaysOn, fixed: fixed, bestFixedInterval: best,
                        bestFixedWithinBudget: !within.isEmpty, adaptive: adaptive))
            }
        }
        for model in models {
            totals.append(Self.totals(for: model, rows: rows.filter { $0.receiver.name == model.name }, budget: settings.budget))
        }
        targets = Self.targets(rows: rows, totals: totals, settings: settings)
    }

    private static func totals(for model: ReceiverModel, rows: [Row], budget: Double) -> Totals {
        var t = Totals(receiver: model)
        var cycles: [Double] = []
        for row in rows {
            cycles += cycleEnergies(row.adaptive, model: model)
            t.floorMJ = row.adaptive.floorMJ
            if row.input.isMoving {
                t.alwaysOnMJ += row.alwaysOn.energyMJ
                t.bestFixedMJ += row.bestFixed.energyMJ
                t.adaptiveMJ += row.adaptive.energyMJ
            } else if let departure = row.input.departure {
                t.parkedAdaptiveMJ = row.adaptive.energyMJ
                t.parkedAlwaysOnMJ = row.alwaysOn.energyMJ
                var dayStart = 0.0
                while dayStart < departure {
                    let dayEnd = min(dayStart + 86_400, departure)
                    let adaptive = energy(row.adaptive, model: model, until: dayEnd) - energy(row.adaptive, model: model, until: dayStart)
                    let alwaysOn = energy(row.alwaysOn, model: model, until: dayEnd) - energy(row.alwaysOn, model: model, until: dayStart)
                    t.parkedDayRatios.append(ratio(adaptive, alwaysOn))
                    dayStart = dayEnd
                }
                let spot = row.input.trace.position(at: row.input.trace.start)
                t.departureDelay = row.adaptive.acceptedFixes.first { fix in
                    fix.time >= departure
                        && Geodesy.distance(spot, Coordinate(latitude: fix.latitude, longitude: fix.longitude)) > budget
                }.map { $0.time - departure }
            }
        }
        t.cycles = cycles.count
        t.medianCycleMJ = Statistics.median(cycles)
        let moving = rows.filter(\.input.isMoving)
        for interval in fixedIntervals {
            let runs = moving.compactMap { row in row.fixed.first { $0.interval == interval }?.result }
            guard runs.count == moving.count, runs.allSatisfy({ $0.errorSkyM.p95 <= budget }) else { continue }
            t.singleFixedInterval = interval
            t.singleFixedMJ = runs.reduce(0) { $0 + $1.energyMJ }
        }
        return t
    }

    /// The energy of each power cycle, replaying the power log through an `EnergyMeter`.
    static func cycleEnergies(_ result: SimulationResult, model: ReceiverModel) -> [Double] {
        replay(result, model: model, until: result.durationS).cycles
    }

    /// Energy spent from the start to `time`, mJ, replaying the power log.
    static func energy(_ result: SimulationResult, model: ReceiverModel, until time: Double) -> Double {
        replay(result, model: model, until: time).totalMillijoules
    }

    private static func replay(_ result: SimulationResult, model: ReceiverModel, until time: Double) -> EnergyMeter {
        var meter = EnergyMeter(energy: model.energy, standbyCurrent: model.standbyCurrent)
        for entry in result.powerLog where entry.time <= time {
            meter.set(entry.state, at: entry.time)
        }
        meter.finish(at: time)
        return meter
    }

    /// The targets of issue 13, as decided.
    private static func targets(rows: [Row], totals: [Totals], settings: Settings) -> [Target] {
        var targets: [Target] = []
        for t in totals {
            let name = t.receiver.name
            let moving = rows.filter { $0.receiver.name == name && $0.input.isMoving }
            let worst = moving.map(\.adaptive.errorSkyM.p95).max()
            targets.append(
                Target(
                    name: "adaptive p95 error on every moving trace (worst), m", receiver: name, value: worst,
                    limit: settings.budget, met: !moving.isEmpty && moving.allSatisfy { $0.adaptive.errorSkyM.p95 <= settings.budget }))
            targets.append(
                Target(
                    name: "sum adaptive / sum of the one fixed interval within budget on every moving trace", receiver: name,
                    value: t.adaptiveOverSingleFixed, limit: 0.25, met: (t.adaptiveOverSingleFixed ?? .infinity) <= 0.25))
            targets.append(
                Target(
                    name: "sum adaptive / sum best fixed per trace (moving traces)", receiver: name, value: t.adaptiveOverBestFixed,
                    limit: 0.85, met: t.adaptiveOverBestFixed <= 0.85))
            targets.append(
                Target(
                    name: "sum adaptive / sum best fixed per trace (moving traces)", receiver: name, value: t.adaptiveOverBestFixed,
                    limit: 0.67, met: t.adaptiveOverBestFixed <= 0.67, stretch: true))
            guard t.parkedAdaptiveMJ != nil else { continue }
            targets.append(
                Target(
                    name: "parked, first day from a cold boot: adaptive / always-on", receiver: name, value: t.parkedFirstDayRatio,
                    limit: 0.012, met: (t.parkedFirstDayRatio ?? .infinity) <= 0.012))
            targets.append(
                Target(
                    name: "parked, every later day (worst): adaptive / always-on", receiver: name, value: t.parkedLaterDaysRatio,
                    limit: 0.01, met: (t.parkedLaterDaysRatio ?? .infinity) <= 0.01))
            targets.append(
                Target(
                    name: "departure noticed after, s", receiver: name, value: t.departureDelay, limit: 900,
                    met: (t.departureDelay ?? .infinity) <= 900))
        }
        return targets
    }

    // MARK: Output

    func json() -> [String: Any] {
        [
            "benchmark": "policy",
            "settings": [
                "budget_m": settings.budget, "min_interval_s": settings.minInterval, "max_interval_s": settings.maxInterval,
                "seed": settings.seed, "receivers": settings.receivers, "fixed_intervals_s": Self.fixedIntervals,
            ] as [String: Any],
            "rows": rows.map(rowJSON),
            "totals": Dictionary(uniqueKeysWithValues: totals.map { ($0.receiver.name, totalsJSON($0)) }),
            "targets": targets.map { target -> [String: Any] in
                [
                    "name": target.name, "receiver": target.receiver, "value": target.value.map { round($0, 4) } ?? NSNull(),
                    "limit": target.limit, "met": target.met, "stretch": target.stretch,
                ]
            },
            "all_targets_met": allTargetsMet,
        ]
    }

    private func figures(_ r: SimulationResult) -> [String: Any] {
        [
            "energy_mj": round(r.energyMJ, 1), "p95_m": round(r.errorM.p95, 2), "max_m": round(r.errorM.max, 2),
            "p95_sky_m": round(r.errorSkyM.p95, 2),
            "fixes": r.fixesAccepted, "receiver_on_s": round(r.receiverOnS, 1),
            // What is stored after thinning (the daemon's default), and its track error.
            "fixes_stored": r.fixesStored, "p95_stored_sky_m": round(r.errorStoredSkyM.p95, 2),
            "rejected": r.rejections, "thinned": r.thinned.values.reduce(0, +),
        ]
    }

    private func rowJSON(_ row: Row) -> [String: Any] {
        var adaptive = figures(row.adaptive)
        adaptive["p50_m"] = round(row.adaptive.errorM.p50, 2)
        adaptive["cycles"] = row.adaptive.cycles
        adaptive["median_cycle_mj"] = round(row.adaptive.medianCycleMJ, 1)
        adaptive["starts"] = ["hot": row.adaptive.starts.hot, "warm": row.adaptive.starts.warm, "cold": row.adaptive.starts.cold]
        adaptive["timeouts"] = row.adaptive.timeouts
        adaptive["ephemeris_refreshes"] = row.adaptive.ephemerisRefreshes
        var best = figures(row.bestFixed)
        best["interval_s"] = row.bestFixedInterval
        best["within_budget"] = row.bestFixedWithinBudget
        return [
            "trace": row.input.trace.name,
            "kind": row.input.kind.rawValue,
            "motion_class": row.input.motionClass.rawValue,
            "moving": row.input.isMoving,
            "receiver": row.receiver.name,
            "duration_s": round(row.input.trace.duration, 1),
            "no_sky_s": row.input.noSky.reduce(0) { $0 + $1.upperBound - $1.lowerBound },
            "always_on": figures(row.alwaysOn),
            "best_fixed": best,
            "adaptive": adaptive,
            "fixed_sweep": row.fixed.map { ["interval_s": $0.interval, "energy_mj": round($0.result.energyMJ, 1), "p95_m": round($0.result.errorM.p95, 2)] },
            "adaptive_over_best_fixed": round(ratio(row.adaptive.energyMJ, row.bestFixed.energyMJ), 4),
            "adaptive_over_always_on": round(ratio(row.adaptive.energyMJ, row.alwaysOn.energyMJ), 4),
        ]
    }

    private func totalsJSON(_ t: Totals) -> [String: Any] {
        [
            "moving_always_on_mj": round(t.alwaysOnMJ, 1),
            "moving_best_fixed_mj": round(t.bestFixedMJ, 1),
            "moving_adaptive_mj": round(t.adaptiveMJ, 1),
            "adaptive_over_best_fixed": round(t.adaptiveOverBestFixed, 4),
            "adaptive_over_always_on": round(t.adaptiveOverAlwaysOn, 4),
            "median_cycle_mj": round(t.medianCycleMJ, 1),
            "adaptive_cycles": t.cycles,
            "floor_mj": round(t.floorMJ, 1),
            "median_cycle_over_floor": round(t.medianCycleOverFloor, 3),
            "parked_adaptive_mj": t.parkedAdaptiveMJ.map { round($0, 1) } ?? NSNull(),
            "parked_always_on_mj": t.parkedAlwaysOnMJ.map { round($0, 1) } ?? NSNull(),
            "parked_ratio_vs_always_on": t.parkedRatio.map { round($0, 5) } ?? NSNull(),
            "parked_day_ratios_vs_always_on": t.parkedDayRatios.map { round($0, 5) },
            "departure_delay_s": t.departureDelay.map { round($0, 1) } ?? NSNull(),
            "moving_single_fixed_interval_s": t.singleFixedInterval ?? NSNull(),
            "moving_single_fixed_mj": t.singleFixedInterval.map { _ in round(t.singleFixedMJ, 1) } ?? NSNull(),
            "adaptive_over_single_fixed": t.adaptiveOverSingleFixed.map { round($0, 4) } ?? NSNull(),
        ]
    }

    func markdown() -> String {
        var lines = [
            "Error budget \(fmt(settings.budget)) m; adaptive intervals \(fmt(settings.minInterval))–\(fmt(settings.maxInterval)) s; seed \(settings.seed). "
                + "Energy in J; error = track-error p95 (max) in m over the seconds with sky (indoors no receiver sees the position: the JSON has the full-trace p95_m too); \"best fixed\" = the longest fixed interval within the budget (⚠ none is: the shortest).",
            "",
            "| trace | receiver | always-on J | best fixed | best fixed J | p95 (max) | adaptive J | p95 (max) | fixes | adaptive / best fixed | adaptive / always-on |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            let best = row.bestFixed
            let flag = row.bestFixedWithinBudget ? "" : " ⚠"
            let name = row.input.isMoving ? row.input.trace.name : "\(row.input.trace.name) (parked)"
            lines.append(
                "| \(name) | \(row.receiver.name) | \(fmt(row.alwaysOn.energyMJ / 1000, 1)) | \(fmt(row.bestFixedInterval)) s\(flag) | "
                    + "\(fmt(best.energyMJ / 1000, 1)) | \(fmt(best.errorSkyM.p95, 1)) (\(fmt(best.errorSkyM.max, 0))) | "
                    + "\(fmt(row.adaptive.energyMJ / 1000, 1)) | \(fmt(row.adaptive.errorSkyM.p95, 1)) (\(fmt(row.adaptive.errorSkyM.max, 0))) | "
                    + "\(row.adaptive.fixesAccepted) | \(fmt(ratio(row.adaptive.energyMJ, best.energyMJ), 2)) | "
                    + "\(fmt(ratio(row.adaptive.energyMJ, row.alwaysOn.energyMJ), 3)) |")
        }
        lines += ["", "| receiver | moving traces: always-on J | best fixed J | adaptive J | adaptive / best fixed | adaptive / always-on | median cycle / floor | parked days / always-on | departure noticed |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for t in totals {
            lines.append(
                "| \(t.receiver.name) | \(fmt(t.alwaysOnMJ / 1000, 1)) | \(fmt(t.bestFixedMJ / 1000, 1)) | \(fmt(t.adaptiveMJ / 1000, 1)) | "
                    + "\(fmt(t.adaptiveOverBestFixed, 3)) | \(fmt(t.adaptiveOverAlwaysOn, 4)) | "
                    + "\(fmt(t.medianCycleMJ, 0)) / \(fmt(t.floorMJ, 0)) mJ = \(fmt(t.medianCycleOverFloor, 2)) | "
                    + "\(t.parkedDayRatios.isEmpty ? "n/a" : t.parkedDayRatios.map { fmt($0 * 100, 2) }.joined(separator: ", ") + " %") | \(t.departureDelay.map { fmt($0, 0) + " s" } ?? (t.parkedAdaptiveMJ == nil ? "n/a" : "never")) |")
        }
        for t in totals {
            let single = t.singleFixedInterval.map {
                "\(fmt($0)) s, \(fmt(t.singleFixedMJ / 1000, 1)) J; adaptive is \(fmt(t.adaptiveOverSingleFixed ?? 0, 3)) × that"
            } ?? "none of \(Self.fixedIntervals.map { fmt($0) }.joined(separator: ", ")) s is"
            lines += ["", "\(t.receiver.name), one fixed interval for every moving trace (what a config can name; the longest within the budget on all): \(single)."]
        }
        lines += ["", "Targets:"]
        for target in targets {
            lines.append("- \(target.met ? "✅" : target.stretch ? "➖" : "❌") \(target.summary)")
        }
        return lines.joined(separator: "\n")
    }

    private func fmt(_ value: Double, _ places: Int = 0) -> String {
        String(format: "%.\(places)f", value)
    }
}

func ratio(_ a: Double, _ b: Double) -> Double { b > 0 ? a / b : 0 }


