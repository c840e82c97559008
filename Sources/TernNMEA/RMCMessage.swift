import Foundation
import TernCore

/// RMC, recommended minimum data: status, position, speed, course and date.
///
/// `$GPRMC,hhmmss.ss,A,ddmm.mmm,N,dddmm.mmm,E,kn.n,ccc.c,ddmmyy,var,E,mode*HH`
public struct RMCMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "RMC"
    /// Metres per second in one knot.
    public static let metresPerSecondPerKnot = 1852.0 / 3600.0

    public var talker: String
    public var time: NMEATimeOfDay
    /// Status field: `A` (active, valid) is true, `V` (void) is false.
    public var statusActive: Bool
    public var coordinate: Coordinate?
    /// Speed over ground, metres per second (converted from knots).
    public var speed: Double?
    /// Course over ground, degrees true.
    public var course: Double?
    public var date: NMEADate?
    /// False when `date` fits no week-rollover candidate near a synchronised clock (`NMEADateResolution`).
    public var dateTrusted = true
    /// NMEA 2.3+ mode indicator (`A` autonomous, `D` differential, `E` estimated, `N` not valid, ...).
    public var mode: Character?

    public init(
        talker: String = "GP", time: NMEATimeOfDay, statusActive: Bool, coordinate: Coordinate?,
        speed: Double? = nil, course: Double? = nil, date: NMEADate?, mode: Character? = nil
    ) {
        self.talker = talker
        self.time = time
        self.statusActive = statusActive
        self.coordinate = coordinate
        self.speed = speed
        self.course = course
        self.date = date
        self.mode = mode
    }

    /// Whether the receiver says the position is valid: status `A` and mode not `N`.
    public var isValid: Bool { statusActive && mode != "N" }

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        // The status letter; 0 for a field longer than one byte (invalid, as any other byte).
        guard let status = sentence.withField(1, { $0.count == 1 ? $0[0] : 0 }) else {
            throw .missingField(sentence: Self.sentenceType, field: "status")
        }
        guard status == UInt8(ascii: "A") || status == UInt8(ascii: "V") else { throw reader.invalid("status", 1) }
        var date: NMEADate?
        var trusted = true
        if let text = sentence.field(8) {
            let reference = context.reference()
            guard let parsed = NMEADate(ddmmyy: text, reference: reference.date) else {
                throw reader.invalid("date", 8)
            }
            let resolution = parsed.resolvingWeekRollover(reference)
            date = resolution.date
            trusted = resolution.trusted
        }
        self.init(
            talker: sentence.talker,
            time: try reader.time(0),
            statusActive: status == UInt8(ascii: "A"),
            coordinate: try reader.coordinate(2),
            speed: try reader.double(6, "speed").map { $0 * Self.metresPerSecondPerKnot },
            course: try reader.double(7, "course"),
            date: date,
            mode: sentence.field(11)?.first)
        dateTrusted = trusted
    }
}
