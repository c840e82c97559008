import TernCore

/// The scheduler policy and the rules a configuration runs with, one line each, for people:
/// `tern demo` prints them before it starts and in its summary.
public struct RulesInForce: Sendable, Codable, Equatable {
    public var policy: String
    public var filter: String
    public var store: String

    public init(_ config: TernConfig) {
        let d = DurationText.format
        let s = config.scheduler
        switch s.policy {
        case let .adaptive(budget, minimum, maximum):
            policy = "adaptive: track within \(Self.metres(budget)) of the truth, fixes \(d(minimum)) to \(d(maximum)) apart"
        case let .fixed(interval):
            policy = "fixed: one fix every \(d(interval))"
        case .alwaysOn:
            policy = "always-on: every fix"
        }
        policy += "; acquisition timeout \(d(s.acquisitionTimeout)), accuracy target \(Self.metres(s.accuracyTarget))"
        if case .adaptive = s.policy {
            policy += ", plausibility check \(s.plausibility == nil ? "off" : "on")"
        }
        let f = config.filter
        var rules = [
            "accuracy ≤ \(Self.metres(f.maxAccuracy))", "speed ≤ \(Self.number(f.maxSpeed)) m/s",
            "jumps beyond \(Self.metres(f.jumpTolerance)) checked",
            f.warmUp > .zero ? "warm-up \(d(f.warmUp))" : "warm-up off",
        ]
        switch f.thinning?.rule {
        case let .errorBudget(tolerance)?: rules.append("thinning within \(Self.metres(tolerance))")
        case let .minimums(distance, angle, period)?:
            rules.append("thinning to \(Self.metres(distance)) / \(Self.number(angle))° / \(d(period))")
        case nil: rules.append("thinning off")
        }
        filter = rules.joined(separator: ", ")
        let w = config.core.commitWindow
        store = w == .immediate
            ? "every position written as it is accepted"
            : "written together every \(d(w.maxDelay)) or \(w.maxPositions) positions"
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private static func metres(_ value: Double) -> String { "\(number(value)) m" }
}
