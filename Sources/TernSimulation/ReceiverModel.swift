import Foundation
import TernCore

/// How a receiver starts: from the ephemeris it has (hot), from almanac and time only (warm), or
/// from nothing (cold: first power-up or backup supply lost).
public enum StartKind: String, Sendable, Hashable, Codable, CaseIterable {
    case hot, warm, cold
}

/// A simulated GNSS receiver's documented behaviour: currents, start times, fix noise.
///
/// Sources:
/// - MT3339: GlobalTop/CDtop PA6H (Adafruit Ultimate GPS) data sheet rev. A07 — 3.3 V, acquisition
///   25 mA, tracking 20 mA, standby (PMTK161) 2 mA (Adafruit product page: "20 mA tracking"), backup 7 µA,
///   TTFF hot < 1 s typ. / warm 33 s / cold 35 s, accuracy 3.0 m CEP50.
/// - u-blox M8 (GPS+GLONASS): u-blox NEO-M8 data sheet UBX-15031086 — 3.0 V, acquisition 32 mA,
///   tracking 29 mA (continuous), software backup 15 µA (V_BCKP), hot 1 s / aided 3 s, warm ~25–26 s,
///   cold 26–29 s, 2.5 m CEP.
/// - Hot start: median 1.5 s, p95 4 s measured at the UART (the data sheets' ~1 s plus a sentence
///   cycle); hot only while the ephemeris is ≤ 2 h old (GPS ephemeris validity, IS-GPS-200 fit interval)
///   and backup power was kept.
/// - Power-on inrush ~40 mA for ~1 s (assumption for a module with backup capacitor charging).
/// - First 1–3 fixes after a start are 2–3× noisier (filters not yet converged).
public struct ReceiverModel: Sendable, Hashable {
    public var name: String
    public var energy: ReceiverEnergy
    /// Current in the receiver's standby mode, milliamperes (not used by on/off cycling).
    public var standbyCurrent: Double
    /// Hot start TTFF: median and 95th percentile, seconds (log-normal between them).
    public var hotTTFFMedian: Double
    public var hotTTFFP95: Double
    /// Warm and cold start TTFF, seconds (typical; drawn ±10 %).
    public var warmTTFF: Double
    public var coldTTFF: Double
    /// Horizontal noise, metres CEP50.
    public var cep50: Double
    /// How many of the first fixes after a start are noisy, and how much noisier.
    public var noisyFixes: ClosedRange<Int>
    public var noisyFactor: ClosedRange<Double>
    /// Speed over ground noise, m/s (1 σ).
    public var speedNoise: Double
    /// The NMEA port's speed, baud (the MT3339's and the M8's default: 9600). A cycle's sentences take
    /// `transmission(bytes:)` on the wire, so its fix reaches Tern that long after its epoch.
    public var baudRate: Int

    public init(
        name: String, energy: ReceiverEnergy, standbyCurrent: Double, hotTTFFMedian: Double, hotTTFFP95: Double,
        warmTTFF: Double, coldTTFF: Double, cep50: Double, noisyFixes: ClosedRange<Int> = 1...3,
        noisyFactor: ClosedRange<Double> = 2...3, speedNoise: Double = 0.1, baudRate: Int = 9600
    ) {
        self.baudRate = baudRate
        self.name = name
        self.energy = energy
        self.standbyCurrent = standbyCurrent
        self.hotTTFFMedian = hotTTFFMedian
        self.hotTTFFP95 = hotTTFFP95
        self.warmTTFF = warmTTFF
        self.coldTTFF = coldTTFF
        self.cep50 = cep50
        self.noisyFixes = noisyFixes
        self.noisyFactor = noisyFactor
        self.speedNoise = speedNoise
    }

    /// MediaTek MT3339 (Adafruit Ultimate GPS, PA6H data sheet).
    public static let mt3339 = ReceiverModel(
        name: "mt3339", energy: .mt3339, standbyCurrent: 2, hotTTFFMedian: 1.5, hotTTFFP95: 4,
        warmTTFF: 33, coldTTFF: 35, cep50: 3.0)

    /// u-blox M8, GPS+GLONASS (NEO-M8 data sheet UBX-15031086).
    public static let ubloxM8 = ReceiverModel(
        name: "ublox-m8", energy: .ubloxM8, standbyCurrent: 0.3, hotTTFFMedian: 1.5, hotTTFFP95: 4,
        warmTTFF: 26, coldTTFF: 29, cep50: 2.5)

    public static let all: [ReceiverModel] = [.mt3339, .ubloxM8]

    /// The start a power-up gets: hot with a young ephemeris and backup power, warm with backup power
    /// only, cold without (or on the very first start, `ephemerisAge == nil`).
    public func startKind(ephemerisAge: Double?, backupPower: Bool = true) -> StartKind {
        guard backupPower, let age = ephemerisAge else { return .cold }
        return age <= energy.hotStartWindow.seconds ? .hot : .warm
    }

    /// A time to first fix for `kind`, seconds.
    public func ttff(_ kind: StartKind, using random: inout SplitMix64) -> Double {
        switch kind {
        case .hot:
            // Log-normal with the given median and p95 (z95 = 1.645).
            let sigma = log(hotTTFFP95 / hotTTFFMedian) / 1.645
            return hotTTFFMedian * exp(sigma * random.nextGaussian())
        case .warm:
            return warmTTFF * (0.9 + 0.2 * random.nextUnit())
        case .cold:
            return coldTTFF * (0.9 + 0.2 * random.nextUnit())
        }
    }

    /// The time to first fix of the `index`th power-on (from 0) of a run seeded `seed`: the same draw
    /// for the same power-on wherever this receiver is simulated (the simulated board and
    /// `simulate(trace:options:)`), so that the two can be compared cycle by cycle.
    public func ttff(_ kind: StartKind, powerOn index: Int, seed: UInt64) -> Double {
        var random = SplitMix64(seed: seed ^ (0x9E37_79B9_7F4A_7C15 &* UInt64(index + 1)))
        return ttff(kind, using: &random)
    }

    /// Seconds `bytes` take on the wire at `baudRate` (10 bits a byte: start, 8 data, stop).
    public func transmission(bytes: Int) -> Double { Double(bytes) * 10 / Double(baudRate) }

    /// Per-axis 1 σ of the position noise, metres (CEP50 ≈ 1.1774 σ for a circular normal).
    public var sigma: Double { cep50 / 1.1774 }
}

extension SplitMix64 {
    /// A standard normal draw (Box–Muller).
    mutating func nextGaussian() -> Double {
        let u1 = max(nextUnit(), 1e-12), u2 = nextUnit()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
