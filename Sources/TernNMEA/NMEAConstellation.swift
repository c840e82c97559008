import TernCore

extension Constellation {
    /// The constellation a talker speaks for: `GP` GPS, `GL` GLONASS, `GA` Galileo, `GB`/`BD` BeiDou,
    /// `GQ`/`QZ` QZSS, `GI` NavIC; nil for `GN` (combined) and anything else.
    public init?(talker: String) {
        switch talker {
        case "GP": self = .gps
        case "GL": self = .glonass
        case "GA": self = .galileo
        case "GB", "BD": self = .beidou
        case "GQ", "QZ": self = .qzss
        case "GI": self = .navic
        default: return nil
        }
    }

    /// The NMEA 4.10+ GNSS system id (GSA field 18, GSV last field, GRS/GBS): 1 GPS, 2 GLONASS,
    /// 3 Galileo, 4 BeiDou, 5 QZSS, 6 NavIC.
    public init?(systemID: Int) {
        switch systemID {
        case 1: self = .gps
        case 2: self = .glonass
        case 3: self = .galileo
        case 4: self = .beidou
        case 5: self = .qzss
        case 6: self = .navic
        default: return nil
        }
    }

    /// The constellation of a satellite id in the NMEA 2.x/3.x numbering that combined (`GN`)
    /// receivers use: 1–32 GPS, 33–64 and 120–158 SBAS, 65–96 GLONASS, 193–202 QZSS,
    /// 201–235 and 401–437 BeiDou, 301–336 Galileo.
    public init(nmeaSatelliteID id: Int) {
        switch id {
        case 1...32: self = .gps
        case 33...64, 120...158: self = .sbas
        case 65...96: self = .glonass
        case 193...200: self = .qzss
        case 201...235, 401...437: self = .beidou
        case 301...336: self = .galileo
        default: self = .unknown
        }
    }
}
