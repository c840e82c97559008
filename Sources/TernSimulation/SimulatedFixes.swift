import Foundation
import TernCore
import TernNMEA

/// What a simulated receiver reports when it has a fix: where it truly is (a `Trajectory`), off by
/// the errors of `FixErrorModel`, with the HDOP and satellites that model draws, its speed over
/// ground with the receiver's noise, and the course. One source for the simulated board's GPS and
/// for `simulate`: the two simulate the same receiver, so what they differ in is the path. Each
/// fix's random draws come from its UTC time (to the hundredth of a second) and the seed, not from
/// a running stream: a fix drawn in one and not the other (a cycle cut by a power-off) shifts
/// nothing after it.
public struct SimulatedFixes: Sendable {
    /// How a power-on starts: its first `noisyFixes` fixes are `noisyFactor` times noisier.
    public struct StartUp: Sendable, Hashable {
        public var noisyFixes: Int
        public var noisyFactor: Double
    }

    public let model: ReceiverModel
    private let seed: UInt64
    private var errors: FixErrorModel

    public init(model: ReceiverModel, seed: UInt64, parameters: FixErrorModel.Parameters? = nil) {
        self.model = model
        self.seed = seed
        errors = FixErrorModel(sigma: model.sigma, parameters: parameters ?? .forReceiver(model), seed: seed ^ 0x5EED_0F_E770_12)
    }

    /// The random draws of the fix dated `time`.
    private func random(for time: Date) -> SplitMix64 {
        let hundredths = UInt64(bitPattern: Int64((time.timeIntervalSince1970 * 100).rounded()))
        return SplitMix64(seed: seed ^ (0xD6E8_FEB8_6659_FD93 &* (hundredths | 1)) ^ hundredths)
    }

    /// The start-up of the `index`th power-on (from 0) of a run seeded `seed`: the same draw wherever
    /// this receiver is simulated, as `ReceiverModel.ttff(_:powerOn:seed:)`.
    public static func startUp(of model: ReceiverModel, powerOn index: Int, seed: UInt64) -> StartUp {
        var random = SplitMix64(seed: seed ^ (0x5747_2755_D1B5_4A32 &* UInt64(index + 1)))
        let count = Int.random(in: model.noisyFixes, using: &random)
        let span = model.noisyFactor.upperBound - model.noisyFactor.lowerBound
        return StartUp(noisyFixes: count, noisyFactor: model.noisyFactor.lowerBound + span * random.nextUnit())
    }

    /// What the error model made of a report that a filter is meant to catch (`FixErrorModel`'s heavy
    /// tail), which nothing in the fix itself shows.
    public enum Fault: Sendable, Hashable {
        /// A false lock: off by `offsetM` (100–1000 m) beyond the ordinary error.
        case outlier(offsetM: Double)
        /// The first fix of a start repeating the previous start's last position, stamped now.
        case staleRepeat
    }

    /// A fix as reported, and the fault the model put in it, if any.
    public struct Report: Sendable, Hashable {
        public var fix: Fix
        public var fault: Fault?

        public init(fix: Fix, fault: Fault? = nil) {
            self.fix = fix
            self.fault = fault
        }
    }

    /// The `number`th fix (from 1) of a power-on that started as `startUp`, dated `time` (increasing),
    /// the receiver truly at `truth`.
    public mutating func fix(time: Date, truth: Route.State, number: Int, startUp: StartUp) -> Fix {
        report(time: time, truth: truth, number: number, startUp: startUp).fix
    }

    /// As `fix(time:truth:number:startUp:)`, with the fault the model put in it.
    public mutating func report(time: Date, truth: Route.State, number: Int, startUp: StartUp) -> Report {
        let noisy = number <= startUp.noisyFixes
        var random = random(for: time)
        let draw = errors.draw(
            at: time.timeIntervalSince1970, truth: truth.coordinate, warmUp: noisy ? startUp.noisyFactor : 1, firstOfStart: number == 1,
            random: &random)
        let coordinate = draw.stale ?? FixErrorModel.offset(truth.coordinate, north: draw.north, east: draw.east)
        let speed = max(0, truth.speed + model.speedNoise * random.nextGaussian())
        let course = truth.speed > 0.2 ? truth.course : 360 * random.nextUnit()
        // What Tern computes from the receiver's GGA: HDOP × UERE.
        let fix = Fix(
            time: time, coordinate: coordinate, altitude: 120 + 4 * random.nextGaussian(), speed: speed, course: course,
            quality: .gps, satellites: draw.satellites, hdop: draw.hdop, accuracy: draw.hdop * NMEAFixAssembler.defaultUERE)
        let fault: Fault? =
            draw.stale != nil ? .staleRepeat
            : draw.outlier ? .outlier(offsetM: (draw.north * draw.north + draw.east * draw.east).squareRoot()) : nil
        return Report(fix: fix, fault: fault)
    }
}
