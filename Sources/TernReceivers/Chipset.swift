/// A receiver family, as far as it has been identified.
public enum Chipset: Sendable, Hashable {
    /// MediaTek/Quectel (PMTK); the `$PMTK705` release when known.
    case mediatek(firmware: String?)
    /// u-blox (UBX); the MON-VER summary or the version lines of `$GPTXT` when known.
    case ublox(version: String?)
    case unknown

    /// The driver for this chipset: Quectel firmware gets the L76X driver, protocol 27+ the gen9 u-blox driver.
    public var driver: any ReceiverDriver {
        switch self {
        case .mediatek(let firmware):
            return MediaTekDriver(model: firmware?.uppercased().contains("QUECTEL") == true ? .quectelL76X : .mt3339)
        case .ublox(let version):
            let major = version.flatMap(Self.protocolMajor) ?? 0
            return UBloxDriver(generation: major >= 27 ? .gen9 : .m8)
        case .unknown:
            return GenericNMEADriver()
        }
    }

    /// For people: `MediaTek (firmware AXN_2.51…)`, `u-blox (…)`, `unknown`.
    public var summary: String {
        switch self {
        case .mediatek(let firmware): "MediaTek/Quectel PMTK" + (firmware.map { " (firmware \($0))" } ?? "")
        case .ublox(let version): "u-blox UBX" + (version.map { " (\($0))" } ?? "")
        case .unknown: "unknown"
        }
    }

    /// `27` from `… PROTVER=27.11 …` or `PROTVER 18.00`.
    static func protocolMajor(_ text: String) -> Int? {
        let marker = Array("PROTVER")
        let characters = Array(text)
        guard characters.count >= marker.count,
            let start = (0...(characters.count - marker.count)).first(where: {
                characters[$0..<($0 + marker.count)].elementsEqual(marker)
            })
        else { return nil }
        let digits = characters[(start + marker.count)...].drop { $0 == "=" || $0 == " " }.prefix { $0.isNumber }
        return Int(String(digits))
    }
}

/// Drivers by board-profile name.
public enum ReceiverDrivers {
    /// `mediatek`/`mt3339`, `quectel`/`l76x`, `ublox`/`m8`, `ublox9`/`m9`/`m10`, `generic`/`nmea`; nil otherwise.
    public static func named(_ name: String) -> (any ReceiverDriver)? {
        switch name.lowercased() {
        case "mediatek", "mtk", "mt3339", "pmtk": MediaTekDriver(model: .mt3339)
        case "quectel", "l76x", "l76": MediaTekDriver(model: .quectelL76X)
        case "ublox", "u-blox", "ubx", "m8": UBloxDriver(generation: .m8)
        case "ublox9", "m9", "m10", "f9": UBloxDriver(generation: .gen9)
        case "generic", "nmea": GenericNMEADriver()
        default: nil
        }
    }
}
