/// PGRMZ, Garmin's altitude sentence (Garmin "Proprietary NMEA 0183 Sentences", 190-00684-00 rev. C):
/// the altitude above mean sea level in feet, and the fix dimension. Like gpsd, Tern uses it as the
/// epoch's altitude when the cycle's GGA/GNS gave none (Garmins send it with GLL-only cycles).
///
/// `$PGRMZ,246,f,3*1B`: altitude, `f` (feet), mode (1 no fix, 2 2D, 3 3D).
public struct PGRMZMessage: NMEAMessageDecodable, Hashable {
    /// The address after the proprietary `P`.
    public static let sentenceType = "GRMZ"
    /// Metres in one international foot.
    public static let metresPerFoot = 0.3048

    /// Altitude above mean sea level, metres; nil when empty or not in feet.
    public var altitude: Double?
    /// The fix dimension the receiver reports (1 no fix, 2 2D, 3 3D), if any.
    public var mode: Int?

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        let feet = reader.letter(1) == UInt8(ascii: "f") ? try reader.double(0, "altitude") : nil
        altitude = feet.map { $0 * Self.metresPerFoot }
        mode = try reader.int(2, "mode")
    }
}
