import Foundation
import TernCore

/// What one simulation run measured. Encodes to JSON with snake_case keys; `acceptedFixes` and
/// `powerLog` are left out of the JSON (export them as CSV).
public struct SimulationResult: Sendable, Hashable, Codable {
    public struct Starts: Sendable, Hashable, Codable {
        public var hot = 0, warm = 0, cold = 0
    }
    public struct ErrorStats: Sendable, Hashable, Codable {
        public var p50 = 0.0, p95 = 0.0, max = 0.0
    }
    /// An accepted fix: seconds from the trace start, position, accuracy estimate (m).
    public struct AcceptedFix: Sendable, Hashable, Codable {
        public var time: Double
        public var latitude: Double
        public var longitude: Double
        public var accuracy: Double?
        public var lat: Double { latitude }
        public var lon: Double { longitude }
    }
    /// The receiver entered `state` at `time` (seconds from the trace start).
    public struct PowerLogEntry: Sendable, Hashable, Codable {
        public var time: Double
        public var state: EnergyMeter.PowerState
    }

    public var trace: String = ""
    public var receiver: String = ""
    public var policy: String = ""
    public var durationS = 0.0
    public var receiverOnS = 0.0
    public var energyMJ = 0.0
    /// Power cycles (duty-cycled policies) or fix requests.
    public var fixesAttempted = 0
    public var fixesAccepted = 0
    public var starts = Starts()
    public var errorM = ErrorStats()
    /// The track error over the seconds with sky from the receiver's first fix on: indoors no
    /// receiver sees where the thing is, and before the first fix after boot (the cold start, the same
    /// for every policy) none knows where it is; that error measures the floor plan and the cold start,
    /// not the policy. `errorM` scores every second.
    public var errorSkyM = ErrorStats()
    public var energyPerFixMJ = 0.0
    /// V × I_acquisition × (median hot TTFF + the wait for the next whole-second epoch, 0.5 s on average
    /// + the time the cycle takes to reach Tern): the least a fix from off can cost through the NMEA port.
    public var floorMJ = 0.0
    public var floorRatio = 0.0
    public var medianCycleMJ = 0.0
    public var cycles = 0
    public var ephemerisRefreshes = 0
    public var timeouts = 0
    public var keptOn = 0
    /// Fixes the filter's rules passed (the scheduler's track: thinning not applied).
    public var acceptedFixes: [AcceptedFix] = []
    /// Fixes stored (after thinning, with the one held at the end).
    public var storedFixes: [AcceptedFix] = []
    public var fixesStored = 0
    /// The filter's verdicts by reason: rejected, thinned; re-anchors.
    public var rejections: [String: Int] = [:]
    public var thinned: [String: Int] = [:]
    public var reanchors = 0
    /// Track error of the stored fixes over the seconds `errorSkyM` scores (equal to it without thinning).
    public var errorStoredSkyM = ErrorStats()
    public var powerLog: [PowerLogEntry] = []

    public init() {}

    enum CodingKeys: String, CodingKey {
        case trace, receiver, policy, timeouts, starts, cycles, rejections, thinned, reanchors
        case fixesStored = "fixes_stored"
        case errorStoredSkyM = "error_stored_sky_m"
        case durationS = "duration_s"
        case receiverOnS = "receiver_on_s"
        case energyMJ = "energy_mj"
        case fixesAttempted = "fixes_attempted"
        case fixesAccepted = "fixes_accepted"
        case errorM = "error_m"
        case errorSkyM = "error_sky_m"
        case energyPerFixMJ = "energy_per_fix_mj"
        case floorMJ = "floor_mj"
        case floorRatio = "floor_ratio"
        case medianCycleMJ = "median_cycle_mj"
        case ephemerisRefreshes = "ephemeris_refreshes"
        case keptOn = "kept_on"
    }
}
