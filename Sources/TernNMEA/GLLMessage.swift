import TernCore

/// GLL, geographic position: latitude, longitude, time and status.
///
/// `$GPGLL,ddmm.mm,N,dddmm.mm,E,hhmmss.ss,A,m*HH` (NMEA 1.x receivers omit time and status).
public struct GLLMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "GLL"

    public var talker: String
    public var coordinate: Coordinate?
    public var time: NMEATimeOfDay?
    /// Status `A` (valid), or no status field at all (NMEA 1.x).
    public var statusActive: Bool
    /// NMEA 2.3+ mode indicator, as in RMC.
    public var mode: UInt8?

    /// Whether the receiver says the position is valid: status `A` and mode not `N`.
    public var isValid: Bool { statusActive && mode != UInt8(ascii: "N") }

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        coordinate = try reader.coordinate(0)
        time = try reader.optionalTime(4)
        statusActive = (reader.letter(5) ?? UInt8(ascii: "A")) == UInt8(ascii: "A")
        mode = reader.letter(6)
    }
}
