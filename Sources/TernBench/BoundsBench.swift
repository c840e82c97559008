import ArgumentParser
import Foundation
import TernCore
import TernSimulation

/// `tern-bench bounds`: how few fixes any schedule could need on each trace, for scale against the
/// policy benchmark. Noise-free: the fixes are the ground truth itself, taken at whole seconds.
struct BoundsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bounds",
        abstract: "Fewest fixes a schedule could need per trace: best fixed interval, a clairvoyant schedule, and a two-rate schedule tuned afterwards.",
        discussion: """
            For every moving trace (as `policy` loads them; no-sky periods ignored), on the noise-free \
            truth at 1 Hz, counts the fixes whose linearly interpolated track keeps the error p95 within \
            --budget: (1) the best fixed interval of the policy sweep; (2) clairvoyant: each next fix as \
            late as keeps every second of its gap within a threshold, the largest threshold whose p95 \
            still holds (knows the whole future: no real schedule can do better by much); (3) two-rate: \
            one interval while the truth is still (< 0.5 m/s), one while moving, the pair with the \
            fewest fixes picked per trace afterwards. Prints JSON; the ratios are fixes over best fixed \
            fixes, which is the energy ratio when every fix costs one hot power cycle. `motion_classes` \
            sums the same per motion class (the traces directory's motion-classes.txt) and pooled.
            """)

    @Option(help: "Directory of ground-truth traces (*.gpx, *.csv).")
    var traces: String = "Tests/TernSimulationTests/Traces"

    @Option(help: "Error budget, metres.")
    var budget: Double = 30

    func run() throws {
        let policy = try PolicyBench.parse(["--traces", traces])
        let inputs = policy.loadInputs().filter(\.isMoving)
        var rows: [[String: Any]] = []
        var byClass: [MotionClass: Sums] = [:]
        for input in inputs {
            let track = TruthTrack(trace: input.trace)
            let fixed = track.bestFixed(budget: budget)
            let clairvoyant = track.clairvoyant(budget: budget)
            let twoRate = track.bestTwoRate(budget: budget)
            byClass[input.motionClass, default: Sums()].add(fixed: fixed.fixes, clairvoyant: clairvoyant.fixes, twoRate: twoRate.fixes)
            rows.append([
                "trace": input.trace.name, "seconds": track.count - 1,
                "best_fixed": ["interval_s": fixed.interval, "fixes": fixed.fixes, "p95_m": round(fixed.p95, 1)],
                "clairvoyant": ["fixes": clairvoyant.fixes, "p95_m": round(clairvoyant.p95, 1),
                                "ratio": round(Double(clairvoyant.fixes) / Double(fixed.fixes), 3)],
                "two_rate": ["still_s": twoRate.still, "moving_s": twoRate.moving, "fixes": twoRate.fixes,
                             "p95_m": round(twoRate.p95, 1), "ratio": round(Double(twoRate.fixes) / Double(fixed.fixes), 3)],
            ])
        }
        let classes: [[String: Any]] = MotionClass.allCases.compactMap { motion in
            byClass[motion].map { $0.json.merging(["class": motion.rawValue, "traces": $0.traces]) { a, _ in a } }
        }
        // Every input has a class (`unclassified` at worst): the totals are the classes' sums.
        let totals = byClass.values.reduce(into: Sums()) { $0.add($1) }
        let json: [String: Any] = [
            "benchmark": "bounds", "budget_m": budget, "traces": rows, "motion_classes": classes, "totals": totals.json,
        ]
        let data = try JSONOutput.data(json)
        print(String(decoding: data, as: UTF8.self))
    }
}

/// Fixes each schedule needed, summed over traces (a motion class, or all of them).
private struct Sums {
    var fixed = 0, clairvoyant = 0, twoRate = 0, traces = 0

    mutating func add(fixed: Int, clairvoyant: Int, twoRate: Int, traces: Int = 1) {
        self.fixed += fixed
        self.clairvoyant += clairvoyant
        self.twoRate += twoRate
        self.traces += traces
    }

    mutating func add(_ other: Sums) {
        add(fixed: other.fixed, clairvoyant: other.clairvoyant, twoRate: other.twoRate, traces: other.traces)
    }

    /// The counts and the ratios to the best fixed interval's (`totals` and each of `motion_classes`).
    var json: [String: Any] {
        [
            "best_fixed_fixes": fixed, "clairvoyant_fixes": clairvoyant, "two_rate_fixes": twoRate,
            "clairvoyant_ratio": round(Double(clairvoyant) / Double(max(fixed, 1)), 3),
            "two_rate_ratio": round(Double(twoRate) / Double(max(fixed, 1)), 3),
        ]
    }
}

/// The truth at every whole second in local metres, and the track error of a set of fix times.
struct TruthTrack {
    private var x: [Double] = []
    private var y: [Double] = []
    private var speed: [Double] = []
    var count: Int { x.count }

    init(trace: Trace) {
        let origin = trace.position(at: trace.start)
        let seconds = Int(trace.duration.rounded(.down))
        for s in 0...max(seconds, 0) {
            let p = trace.position(at: trace.start.addingTimeInterval(Double(s)))
            let d = Geodesy.distance(origin, p), b = Geodesy.bearing(from: origin, to: p) * .pi / 180
            x.append(d * sin(b))
            y.append(d * cos(b))
        }
        for i in x.indices {
            let j = min(i + 1, x.count - 1), k = max(j - 1, 0)
            speed.append(hypot(x[j] - x[k], y[j] - y[k]))
        }
    }

    /// Distance from the truth at second `t` to the chord between the fixes at `a` and `b`.
    private func error(_ t: Int, _ a: Int, _ b: Int) -> Double {
        let f = Double(t - a) / Double(b - a)
        return hypot(x[t] - (x[a] + (x[b] - x[a]) * f), y[t] - (y[a] + (y[b] - y[a]) * f))
    }

    private func worst(_ a: Int, _ b: Int) -> Double {
        guard b > a + 1 else { return 0 }
        var m = 0.0
        for t in (a + 1)..<b { m = max(m, error(t, a, b)) }
        return m
    }

    /// p95 of the error over every second, for fixes at `times` (sorted, first 0, last count − 1).
    func p95(_ times: [Int]) -> Double {
        var errors: [Double] = []
        errors.reserveCapacity(count)
        errors.append(0)
        for (a, b) in zip(times, times.dropFirst()) {
            for t in (a + 1)...b { errors.append(t == b ? 0 : error(t, a, b)) }
        }
        errors.sort()
        return errors[min(errors.count - 1, Int((0.95 * Double(errors.count - 1)).rounded()))]
    }

    /// Fix times every `interval` seconds, plus the last second.
    private func every(_ interval: Int) -> [Int] {
        var times = Array(stride(from: 0, to: count - 1, by: interval))
        times.append(count - 1)
        return times
    }

    /// Fixes and p95 of a fix every `interval` seconds.
    private func fixed(_ interval: Int) -> (fixes: Int, p95: Double) {
        let times = every(interval)
        return (times.count - 1, p95(times))
    }

    /// The shortest interval of the sweep: what each schedule falls back to when nothing is within budget.
    private var shortest: Int { Int(PolicyReport.fixedIntervals[0]) }

    /// The longest interval of the sweep within the budget (else the shortest), as `policy` picks it.
    func bestFixed(budget: Double) -> (interval: Int, fixes: Int, p95: Double) {
        let sweep = PolicyReport.fixedIntervals.map { Int($0) }.map { (interval: $0, result: fixed($0)) }
        let best = sweep.last { $0.result.p95 <= budget } ?? sweep[0]
        return (best.interval, best.result.fixes, best.result.p95)
    }

    /// Greedy: each next fix as late as keeps the gap's worst error within `threshold` (found by
    /// doubling then bisection, up to 900 s); the largest threshold whose p95 is within the budget.
    func clairvoyant(budget: Double) -> (fixes: Int, p95: Double) {
        var best: (fixes: Int, p95: Double)?
        for threshold in stride(from: budget * 0.5, through: budget * 4, by: budget * 0.1) {
            var times = [0]
            var a = 0
            while a < count - 1 {
                var low = a + 1, high = min(a + 900, count - 1)
                if worst(a, high) <= threshold { low = high } else {
                    while high - low > 1 {
                        let mid = (low + high) / 2
                        if worst(a, mid) <= threshold { low = mid } else { high = mid }
                    }
                }
                times.append(low)
                a = low
            }
            let p = p95(times)
            if p <= budget, best.map({ times.count - 1 < $0.fixes }) ?? true { best = (times.count - 1, p) }
        }
        return best ?? fixed(shortest)
    }

    /// One interval while the truth is still, one while moving, the pair with the fewest fixes.
    func bestTwoRate(budget: Double) -> (still: Int, moving: Int, fixes: Int, p95: Double) {
        let stills = [30, 60, 90, 120, 180, 240, 300, 450, 600, 900]
        let movings = [5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 450, 600, 900]
        var best: (still: Int, moving: Int, fixes: Int, p95: Double)?
        for still in stills {
            for moving in movings {
                var times = [0]
                while let a = times.last, a < count - 1 {
                    times.append(min(count - 1, a + (speed[a] < 0.5 ? still : moving)))
                }
                if let best, times.count - 1 >= best.fixes { continue }
                let p = p95(times)
                if p <= budget { best = (still, moving, times.count - 1, p) }
            }
        }
        let fallback = fixed(shortest)
        return best ?? (stills[0], movings[0], fallback.fixes, fallback.p95)
    }
}
