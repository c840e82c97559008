import TernCore

/// GNS, GNSS fix data (NMEA 3.0+): GGA for multi-constellation receivers, with a mode per system.
///
/// `$GNGNS,hhmmss.ss,ddmm.mm,N,dddmm.mm,E,AAN,ss,h.h,a.a,g.g,age,station,status*HH`
public struct GNSMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "GNS"

    public var talker: String
    public var time: NMEATimeOfDay?
    public var coordinate: Coordinate?
    /// One mode letter per constellation (GPS, GLONASS, Galileo, BeiDou, ...): `N` no fix,
    /// `A` autonomous, `D` differential, `R` RTK fixed, `F` RTK float, `E` estimated, ...
    public var modes: String
    public var satellites: Int?
    public var hdop: Double?
    public var altitude: Double?
    public var geoidSeparation: Double?

    /// Whether any constellation has a fix (a mode letter other than `N`).
    public var isValid: Bool { modes.utf8.contains { $0 != UInt8(ascii: "N") } }

    /// The best quality among the per-system mode letters.
    public var quality: FixQuality {
        var best = FixQuality.invalid
        for letter in modes.utf8 {
            let quality = FixQuality(modeIndicator: letter)
            if quality.rank > best.rank { best = quality }
        }
        return best
    }

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        time = try reader.optionalTime(0)
        coordinate = try reader.coordinate(1)
        modes = sentence.field(5).map(String.init) ?? ""
        satellites = try reader.int(6, "satellites")
        hdop = try reader.double(7, "HDOP")
        altitude = try reader.double(8, "altitude")
        geoidSeparation = try reader.double(9, "geoid separation")
    }
}

extension FixQuality {
    /// The quality an NMEA 2.3+ mode indicator (RMC, GLL, VTG, GNS) stands for.
    init(modeIndicator letter: UInt8?) {
        switch letter {
        case UInt8(ascii: "A"): self = .gps
        case UInt8(ascii: "D"): self = .dgps
        case UInt8(ascii: "P"): self = .pps
        case UInt8(ascii: "R"): self = .rtkFixed
        case UInt8(ascii: "F"): self = .rtkFloat
        case UInt8(ascii: "E"): self = .estimated
        case UInt8(ascii: "M"): self = .manual
        case UInt8(ascii: "S"): self = .simulation
        default: self = .invalid
        }
    }

    /// Ordering from worst to best, for picking the best of several constellations' modes.
    var rank: Int {
        switch self {
        case .invalid: 0
        case .simulation: 1
        case .manual: 2
        case .estimated: 3
        case .gps: 4
        case .pps: 5
        case .dgps: 6
        case .rtkFloat: 7
        case .rtkFixed: 8
        }
    }
}
