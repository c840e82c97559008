import TernCore

/// GGA, global positioning system fix data: position, fix quality, satellites, HDOP, altitude.
///
/// `$GPGGA,hhmmss.ss,ddmm.mmm,N,dddmm.mmm,E,q,ss,h.h,a.a,M,g.g,M,age,station*HH`
public struct GGAMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "GGA"

    public var talker: String
    public var time: NMEATimeOfDay
    /// Nil while the receiver has no position (empty fields).
    public var coordinate: Coordinate?
    /// Unknown quality codes decode as `.invalid`.
    public var quality: FixQuality
    public var satellites: Int?
    public var hdop: Double?
    /// Antenna altitude above mean sea level, metres.
    public var altitude: Double?
    /// Geoid height above the WGS-84 ellipsoid, metres.
    public var geoidSeparation: Double?

    public init(
        talker: String = "GP", time: NMEATimeOfDay, coordinate: Coordinate?, quality: FixQuality,
        satellites: Int? = nil, hdop: Double? = nil, altitude: Double? = nil, geoidSeparation: Double? = nil
    ) {
        self.talker = talker
        self.time = time
        self.coordinate = coordinate
        self.quality = quality
        self.satellites = satellites
        self.hdop = hdop
        self.altitude = altitude
        self.geoidSeparation = geoidSeparation
    }

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        let qualityCode = try reader.int(5, "quality") ?? 0
        self.init(
            talker: sentence.talker,
            time: try reader.time(0),
            coordinate: try reader.coordinate(1),
            quality: FixQuality(rawValue: qualityCode) ?? .invalid,
            satellites: try reader.int(6, "satellites"),
            hdop: try reader.double(7, "HDOP"),
            altitude: try reader.double(8, "altitude"),
            geoidSeparation: try reader.double(10, "geoid separation"))
    }
}
