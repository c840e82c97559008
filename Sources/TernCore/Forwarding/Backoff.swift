/// Exponential backoff with full jitter: attempt n waits a random time in
/// [base·2ⁿ⁻¹·(1−jitter), base·2ⁿ⁻¹], capped at `maximum`.
public struct Backoff: Sendable, Hashable {
    public var base: Duration
    public var maximum: Duration
    /// Fraction of the delay that is randomised, 0…1.
    public var jitter: Double

    public init(base: Duration = .seconds(1), maximum: Duration = .seconds(300), jitter: Double = 0.5) {
        self.base = base
        self.maximum = maximum
        self.jitter = min(1, max(0, jitter))
    }

    /// The delay before retry number `attempt` (1-based). `unitRandom` in [0, 1) picks the jitter.
    public func delay(attempt: Int, unitRandom: Double) -> Duration {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        let ceiling = min(base.seconds * pow2(exponent), maximum.seconds)
        let seconds = ceiling * (1 - jitter * unitRandom)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private func pow2(_ x: Double) -> Double { Double(1 << Int(x)) }
}

/// A small, fast, seedable random generator so state machines stay deterministic.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in [0, 1).
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
