/// GSV, satellites in view: one part of a multi-sentence list, up to four satellites per part.
///
/// `$GPGSV,n,i,total,id,el,az,snr,...,signal*HH` (the signal id field is NMEA 4.10+).
public struct GSVMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "GSV"

    /// One satellite's entry.
    public struct Satellite: Sendable, Hashable {
        public var id: Int
        /// Degrees above the horizon.
        public var elevation: Int?
        /// Degrees true.
        public var azimuth: Int?
        /// Signal-to-noise ratio, dB-Hz; nil when not tracked.
        public var snr: Int?
    }

    public var talker: String
    public var totalMessages: Int
    public var messageNumber: Int
    /// Satellites in view of this talker (and signal), over all parts.
    public var satellitesInView: Int
    public var satellites: [Satellite]
    /// The NMEA 4.10 signal id (e.g. 1 = GPS L1 C/A, 7 = Galileo E1), when sent.
    public var signalID: Int?

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        totalMessages = try reader.int(0, "message count") ?? 1
        messageNumber = try reader.int(1, "message number") ?? 1
        satellitesInView = try reader.int(2, "satellites in view") ?? 0
        let count = sentence.fieldCount
        let hasSignal = count > 3 && (count - 3) % 4 == 1
        signalID = hasSignal ? try reader.int(count - 1, "signal id") : nil
        var satellites: [Satellite] = []
        var index = 3
        while index + 3 < count {
            if let id = try reader.int(index, "satellite id") {
                satellites.append(Satellite(
                    id: id, elevation: try reader.int(index + 1, "elevation"),
                    azimuth: try reader.int(index + 2, "azimuth"), snr: try reader.int(index + 3, "SNR")))
            }
            index += 4
        }
        self.satellites = satellites
    }
}
