import TernCore

/// GSA, DOP and active satellites: 2D/3D mode, the satellites used, PDOP/HDOP/VDOP.
///
/// `$GNGSA,A,3,s1,...,s12,p.p,h.h,v.v,sys*HH` (the system id field is NMEA 4.10+).
public struct GSAMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "GSA"

    public var talker: String
    /// Field 2: 1 no fix, 2 2D, 3 3D; `.unknown` when absent or out of range.
    public var mode: FixMode
    /// Ids of the satellites used in the solution.
    public var satellites: [Int]
    public var pdop: Double?
    public var hdop: Double?
    public var vdop: Double?
    /// The NMEA 4.10 GNSS system id (field 18), when the receiver sends it.
    public var systemID: Int?

    /// The constellation these satellites belong to: from the system id, else the talker;
    /// nil for a combined (`GN`) GSA without system id (see `Constellation(nmeaSatelliteID:)`).
    public var constellation: Constellation? {
        systemID.flatMap(Constellation.init(systemID:)) ?? Constellation(talker: talker)
    }

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        mode = try reader.int(1, "mode").flatMap { (1...3).contains($0) ? FixMode(rawValue: $0) : nil } ?? .unknown
        var satellites: [Int] = []
        for index in stride(from: 2, to: min(14, sentence.fieldCount), by: 1) {
            if let id = try reader.int(index, "satellite id") { satellites.append(id) }
        }
        self.satellites = satellites
        pdop = try reader.double(14, "PDOP")
        hdop = try reader.double(15, "HDOP")
        vdop = try reader.double(16, "VDOP")
        systemID = try reader.int(17, "system id")
    }
}
