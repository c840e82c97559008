import Foundation
import TernCore

/// How wrong a simulated fix is, and what the receiver says about it: the reported accuracy comes from
/// a simulated HDOP (Tern computes `HDOP × UERE`, as from a real receiver's GGA), while the actual error
/// is only loosely tied to it and has a heavy tail. The scheduler and the filter see only what a real
/// receiver would report, never the injected error.
///
/// Per fix, per axis (north, east), the error is
///
///     e = σ · (HDOP / HDOP₅₀)^γ · U · M · W · (√ρ · b(t) + √(1−ρ) · w)
///
/// - σ: the steady per-axis 1 σ, from the datasheet CEP50 (`ReceiverModel.sigma`; MT3339 3.0 m, M8 2.5 m CEP).
/// - b(t): a unit Gauss–Markov process with time constant `biasTau` (120 s) on a one-second grid, w:
///   white unit noise;
///   `biasShare` ρ = 0.8 of the variance is the slow part. GPS position errors are dominated by slowly
///   varying terms (orbit and clock, ionosphere, troposphere, multipath; Misra & Enge, *Global
///   Positioning System*, 2nd ed., ch. 5–6); the 120 s and the 0.8 are **assumptions**.
/// - HDOP: log-normal around `hdopMedian`, its logarithm a Gauss–Markov process (τ = 300 s: the
///   geometry changes slowly, an **assumption**). The median 1.0 and the spread (p95 3.3, so a log σ of
///   0.73) are **measured** on the repository's corpus (`Tests/TernNMEATests/Corpus`: 1,049 GGA fixes
///   from 51 logs, HDOP median 1.02, p95 3.3, satellites median 9; the MT3339 log alone: HDOP 0.98,
///   10 satellites; the NEO-M8N: 1.01, 12). Satellites used: `satellites50` × (HDOP₅₀ / HDOP)², since
///   HDOP falls about as 1/√n.
/// - γ = 0.5 and U (log-normal, log σ 0.35, slowly varying like b): the reported accuracy explains only
///   part of the error. HDOP × UERE is a 1 σ model, and the receivers' own estimates are known to be
///   loosely correlated with the actual error (multipath and atmospheric errors do not show in the
///   geometry). γ and 0.35 are **assumptions**.
/// - M: multipath episodes (urban canyons, trees, parked next to a wall): a two-state Markov chain,
///   in an episode `multipathShare` (5 %) of the time, episodes lasting `multipathEpisode` (20 s) on
///   average, errors × `multipathFactor` (4) while HDOP moves only × 1.2. Urban smartphone studies
///   find mean errors of 7–13 m where open-sky ones find ~4.9 m (Merry & Bettinger, *PLOS ONE* 14(7)
///   e0219890, 2019; gps.gov "GPS accuracy", after van Diggelen & Enge, ION GNSS+ 2015), i.e. a
///   mixture with a several-fold tail; the 5 %, 20 s and 4 × are **assumptions**.
/// - W: the first 1–3 fixes after a start are 2–3 × noisier (the receiver's filter has not converged;
///   `ReceiverModel.noisyFixes`, an assumption already there) and use fewer satellites (HDOP × √(9/5)).
/// - Outliers: with probability `outlierRate` (0.2 % of fixes) a fix is off by 100–1000 m (log-uniform,
///   any direction) with an ordinary HDOP (a wrong correlation peak, a reflected signal locked alone).
///   An **assumption**: the "occasional outliers of hundreds of metres".
/// - Stale position: with probability `staleRate` (2 % of power-ons) the first fix of a start repeats
///   the last position of the previous start, stamped with the current time (receivers that report the
///   position they kept over backup as a valid fix). An **assumption**.
public struct FixErrorModel: Sendable {
    public struct Parameters: Sendable, Hashable {
        public var biasShare = 0.8
        public var biasTau = 120.0
        public var hdopMedian = 1.0
        public var hdopLogSigma = 0.73
        public var hdopTau = 300.0
        public var satellitesMedian = 9.0
        public var hdopExponent = 0.5
        public var unexplainedLogSigma = 0.35
        public var multipathShare = 0.05
        public var multipathEpisode = 20.0
        public var multipathFactor = 4.0
        public var multipathHDOPFactor = 1.2
        public var outlierRate = 0.002
        public var outlierRange: ClosedRange<Double> = 100...1000
        public var staleRate = 0.02

        public init() {}

        /// For a receiver: the satellites it uses under open sky (GPS-only 9, GPS+GLONASS 12, from the
        /// corpus logs above).
        public static func forReceiver(_ model: ReceiverModel) -> Parameters {
            var p = Parameters()
            p.satellitesMedian = model.name == "ublox-m8" ? 12 : 9
            return p
        }
    }

    /// One drawn fix: the offset from the truth (metres north, east), what the receiver reports, and
    /// whether the position is a stale repeat.
    public struct Draw: Sendable, Hashable {
        public var north: Double
        public var east: Double
        public var hdop: Double
        public var satellites: Int
        /// The previous start's last position, reported again (the offset is then meaningless).
        public var stale: Coordinate?
        public var outlier: Bool
        public var multipath: Bool
    }

    public var parameters: Parameters
    public let sigma: Double
    /// Keys the slow state's random steps (with the second they belong to).
    private let seed: UInt64
    private var biasNorth = 0.0
    private var biasEast = 0.0
    private var unexplained = 0.0
    private var geometry = 0.0
    private var inMultipath = false
    /// The whole second the slow state is at (nil before the first draw).
    private var stateSecond: Int64?
    /// The last position reported, for a stale repeat at the next start.
    private var lastReported: Coordinate?

    /// The slowly varying terms (b, U, log HDOP, the multipath chain) run on a one-second grid of the
    /// receiver's clock, each step's randomness drawn from `seed` and that second: their value at a
    /// second does not depend on which earlier seconds had a fix drawn (exactly the same process in
    /// law as stepping from fix to fix; Gauss–Markov and Markov chains compose over steps).
    public init(sigma: Double, parameters: Parameters = Parameters(), seed: UInt64) {
        self.sigma = sigma
        self.parameters = parameters
        self.seed = seed
    }

    /// The random steps of second `second`.
    private func random(at second: Int64) -> SplitMix64 {
        let key = UInt64(bitPattern: second)
        return SplitMix64(seed: seed ^ (0x9E37_79B9_7F4A_7C15 &* (key | 1)) ^ (key << 17))
    }

    /// Brings the slow state to `second`: one step per second from where it was, or a fresh draw from
    /// the stationary distribution at the first draw and after a gap where the past no longer matters.
    private mutating func advance(to second: Int64) {
        let p = parameters
        let memory = Int64(10 * max(p.biasTau, p.hdopTau, p.multipathEpisode))
        guard let at = stateSecond, second >= at, second - at <= memory else {
            var random = random(at: second)
            biasNorth = random.nextGaussian()
            biasEast = random.nextGaussian()
            unexplained = random.nextGaussian()
            geometry = random.nextGaussian()
            inMultipath = random.nextUnit() < p.multipathShare
            stateSecond = second
            return
        }
        let bias = exp(-1 / p.biasTau), hdop = exp(-1 / p.hdopTau)
        // Two-state chain: leave an episode at 1/episode, enter one so that `share` of the time is in one.
        let out = 1 / p.multipathEpisode, into = out * p.multipathShare / max(1e-9, 1 - p.multipathShare)
        let stay = exp(-(out + into))
        var s = at
        while s < second {
            s += 1
            var random = random(at: s)
            func step(_ x: Double, _ rho: Double) -> Double { rho * x + (1 - rho * rho).squareRoot() * random.nextGaussian() }
            biasNorth = step(biasNorth, bias)
            biasEast = step(biasEast, bias)
            unexplained = step(unexplained, bias)
            geometry = step(geometry, hdop)
            let onProbability = p.multipathShare + ((inMultipath ? 1 : 0) - p.multipathShare) * stay
            inMultipath = random.nextUnit() < onProbability
        }
        stateSecond = second
    }

    /// Draws the error of a fix at `time` (seconds of the receiver's clock, e.g. UTC; increasing),
    /// `warmUp` its start-up noise factor (1 once settled), `firstOfStart` true for a power-on's first
    /// fix; `truth` is where it really is. `random` draws the fix's own noise.
    public mutating func draw(at time: Double, truth: Coordinate, warmUp: Double, firstOfStart: Bool, random: inout SplitMix64) -> Draw {
        let p = parameters
        advance(to: Int64((time + 1e-6).rounded(.down)))

        var hdop = p.hdopMedian * exp(p.hdopLogSigma * geometry)
        let steadySatellites = p.satellitesMedian * pow(p.hdopMedian / hdop, 2)
        var satellites = Int(min(max(4, steadySatellites.rounded()), p.satellitesMedian + 6))
        if warmUp > 1 {
            hdop *= (9.0 / 5).squareRoot()
            satellites = max(4, min(satellites, 5))
        }
        if inMultipath { hdop *= p.multipathHDOPFactor }
        hdop = (hdop * 100).rounded() / 100
        let scale = sigma * pow(max(hdop, 0.1) / p.hdopMedian, p.hdopExponent) * exp(p.unexplainedLogSigma * unexplained)
            * (inMultipath ? p.multipathFactor : 1) * warmUp
        let white = (1 - p.biasShare).squareRoot(), slow = p.biasShare.squareRoot()
        var north = scale * (slow * biasNorth + white * random.nextGaussian())
        var east = scale * (slow * biasEast + white * random.nextGaussian())
        var outlier = false
        if random.nextUnit() < p.outlierRate {
            outlier = true
            let distance = p.outlierRange.lowerBound * pow(p.outlierRange.upperBound / p.outlierRange.lowerBound, random.nextUnit())
            let angle = 2 * Double.pi * random.nextUnit()
            north += distance * cos(angle)
            east += distance * sin(angle)
        }
        var stale: Coordinate?
        if firstOfStart, let previous = lastReported, random.nextUnit() < p.staleRate { stale = previous }
        lastReported = stale ?? Self.offset(truth, north: north, east: east)
        return Draw(north: north, east: east, hdop: hdop, satellites: satellites, stale: stale, outlier: outlier, multipath: inMultipath)
    }

    /// `coordinate` moved by metres north and east (flat Earth over the offset).
    public static func offset(_ coordinate: Coordinate, north: Double, east: Double) -> Coordinate {
        let metresPerDegree = Geodesy.earthRadius * .pi / 180
        return Coordinate(
            latitude: coordinate.latitude + north / metresPerDegree,
            longitude: coordinate.longitude + east / (metresPerDegree * max(0.01, cos(coordinate.latitude * .pi / 180))))
    }
}
