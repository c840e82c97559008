/// VTG, course and speed over ground.
///
/// `$GPVTG,ccc.c,T,ccc.c,M,s.ss,N,s.ss,K,m*HH`, or the NMEA 1.x form without unit letters
/// (`$GPVTG,ccc.c,ccc.c,s.ss,s.ss*HH`).
public struct VTGMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "VTG"

    public var talker: String
    /// Course over ground, degrees true.
    public var course: Double?
    /// Speed over ground, metres per second.
    public var speed: Double?
    /// NMEA 2.3+ mode indicator, as in RMC.
    public var mode: UInt8?

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        let knots = RMCMessage.metresPerSecondPerKnot
        if reader.letter(1) == UInt8(ascii: "T") || sentence.fieldCount >= 8 {
            course = try reader.double(0, "course")
            speed = try reader.double(4, "speed").map { $0 * knots }
            if speed == nil { speed = try reader.double(6, "speed").map { $0 / 3.6 } }
            mode = reader.letter(8)
        } else {
            course = try reader.double(0, "course")
            speed = try reader.double(2, "speed").map { $0 * knots }
            mode = nil
        }
    }
}
