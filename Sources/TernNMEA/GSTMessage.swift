/// GST, pseudorange error statistics: the receiver's own 1 σ error estimates, metres.
///
/// `$GPGST,hhmmss.ss,rms,major,minor,orient,σlat,σlon,σalt*HH`
public struct GSTMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "GST"

    public var talker: String
    public var time: NMEATimeOfDay?
    /// RMS of the pseudorange residuals, metres.
    public var rms: Double?
    public var sigmaLatitude: Double?
    public var sigmaLongitude: Double?
    public var sigmaAltitude: Double?

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        time = try reader.optionalTime(0)
        rms = try reader.double(1, "RMS")
        sigmaLatitude = try reader.double(5, "latitude error")
        sigmaLongitude = try reader.double(6, "longitude error")
        sigmaAltitude = try reader.double(7, "altitude error")
    }
}
