import Foundation

/// A point on the WGS-84 ellipsoid, in decimal degrees.
public struct Coordinate: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// True when both values are finite and inside their ranges.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }
}

/// The receiver's own statement of how the position was obtained (NMEA GGA field 6).
public enum FixQuality: Int, Sendable, Hashable, Codable {
    case invalid = 0
    case gps = 1
    case dgps = 2
    case pps = 3
    case rtkFixed = 4
    case rtkFloat = 5
    case estimated = 6
    case manual = 7
    case simulation = 8

    /// Whether a position with this quality describes where the antenna really is.
    public var isUsable: Bool {
        switch self {
        case .gps, .dgps, .pps, .rtkFixed, .rtkFloat: true
        case .invalid, .estimated, .manual, .simulation: false
        }
    }
}

/// The dimension of a fix, as gpsd reports it.
public enum FixMode: Int, Sendable, Hashable, Codable {
    case unknown = 0
    case noFix = 1
    case twoD = 2
    case threeD = 3
}

/// A satellite navigation system. As a dictionary key it encodes as a JSON object key
/// (`{"gps": 8}`), not as a flat array.
public enum Constellation: String, Sendable, Hashable, Codable, CaseIterable, CodingKeyRepresentable {
    case gps, glonass, galileo, beidou, qzss, navic, sbas, unknown
}

/// The receiver's own error estimate (NMEA GST), 1 σ in metres.
public struct ErrorEstimate: Sendable, Hashable, Codable {
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?

    public init(latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}

/// One position report from a receiver: everything a receiver cycle said about where and when.
public struct Fix: Sendable, Hashable, Codable {
    /// UTC time of the fix, with its date.
    public var time: Date
    public var coordinate: Coordinate
    /// Altitude above mean sea level, metres.
    public var altitude: Double?
    /// Speed over ground, metres per second.
    public var speed: Double?
    /// Course over ground, degrees true.
    public var course: Double?
    public var quality: FixQuality
    /// Satellites used in the solution.
    public var satellites: Int?
    /// Horizontal dilution of precision.
    public var hdop: Double?
    /// Estimated horizontal accuracy (1 σ), metres.
    public var accuracy: Double?
    /// 2-D or 3-D (from GSA/GNS/GGA); `.unknown` when the receiver did not say.
    public var mode: FixMode = .unknown
    /// Geoid separation (height of the geoid above the WGS-84 ellipsoid), metres.
    public var geoidSeparation: Double?
    public var pdop: Double?
    public var vdop: Double?
    /// Satellites in view (all constellations).
    public var satellitesInView: Int?
    /// Satellites whose signal the receiver tracks (a GSV SNR given), all constellations. During an
    /// acquisition (quality `.invalid`, no position yet) this tells a slow start under the sky from
    /// no sky at all.
    public var satellitesHeard: Int?
    /// Satellites used in the solution, per constellation (from GSA).
    public var usedByConstellation: [Constellation: Int]?
    /// Satellites in view, per constellation (from GSV).
    public var inViewByConstellation: [Constellation: Int]?
    /// The receiver's σ estimates (GST), when it sends them.
    public var errorEstimate: ErrorEstimate?
    /// Set when the receiver's date contradicts a synchronised system clock and no GPS week-rollover
    /// correction reconciles them (a replayed log, a receiver reporting garbage): `time` must not be
    /// used to order fixes.
    public var timeUntrusted = false
    /// The system's realtime clock when the first sentence carrying this epoch's time was read from the
    /// receiver (nil when not read live: logs, the simulator). `time` minus this is what the system
    /// clock is off by, plus the receiver's output and the line's latency: chrony's SOCK sample.
    public var receivedAt: Date?

    public init(
        time: Date, coordinate: Coordinate, altitude: Double? = nil, speed: Double? = nil,
        course: Double? = nil, quality: FixQuality = .gps, satellites: Int? = nil,
        hdop: Double? = nil, accuracy: Double? = nil
    ) {
        self.time = time
        self.coordinate = coordinate
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.quality = quality
        self.satellites = satellites
        self.hdop = hdop
        self.accuracy = accuracy
    }

    /// A receiver cycle without a fix (still acquiring): quality `.invalid`, at 0°, 0°, saying only how
    /// many satellites the receiver hears.
    public static func noFix(time: Date, satellitesHeard: Int?) -> Fix {
        var fix = Fix(time: time, coordinate: Coordinate(latitude: 0, longitude: 0), quality: .invalid)
        fix.satellitesHeard = satellitesHeard
        return fix
    }
}

extension Fix {
    /// The ranging error (1 σ, metres) assumed for a fix that has only an HDOP: a consumer-grade
    /// single-frequency receiver's. An assumption, not a measurement (`NMEAFixAssembler` uses it too).
    public static let defaultUERE = 4.0

    /// The fix's accuracy (1 σ, metres), else HDOP × `defaultUERE`; nil with neither. The one
    /// estimate the filter, the scheduler and the motion estimate read (each says what it assumes
    /// when there is none).
    public var accuracyEstimate: Double? { accuracy ?? hdop.map { $0 * Fix.defaultUERE } }

    /// The accuracy assumed for a fix that reports neither an accuracy nor an HDOP: a typical consumer
    /// fix's (1 σ, metres; HDOP 1.25 × `defaultUERE`). An assumption.
    public static let typicalAccuracy = 5.0

    /// `accuracyEstimate`, else `typicalAccuracy`.
    public var accuracyOrTypical: Double { accuracyEstimate ?? Fix.typicalAccuracy }

    /// The radius the fix's error stays within 95 % of the time: 2DRMS, twice `accuracyOrTypical`
    /// (HDOP × UERE being the DRMS; the standard 95 % horizontal figure).
    public var errorRadius95: Double { 2 * accuracyOrTypical }
}
