import TernNMEA

/// `$PMTK001,<cmd>,<flag>`: the acknowledgement of a PMTK packet ("MTK NMEA Packet User Manual", PMTK001).
public struct PMTKAck: Sendable, Hashable {
    public enum Flag: Int, Sendable, Hashable {
        case invalid = 0
        case unsupported = 1
        case failed = 2
        case succeeded = 3
    }

    /// The packet type acknowledged (`161` for PMTK161).
    public var packetType: Int
    public var flag: Flag

    public init(packetType: Int, flag: Flag) {
        self.packetType = packetType
        self.flag = flag
    }

    /// Parses a `$PMTK001` sentence; nil for anything else or malformed fields.
    public init?(_ sentence: NMEASentence) {
        guard sentence.isProprietary, sentence.type == "MTK001",
            let type = sentence.field(0).flatMap({ Int($0) }),
            let flag = sentence.field(1).flatMap({ Int($0) }).flatMap(Flag.init(rawValue:))
        else { return nil }
        self.init(packetType: type, flag: flag)
    }
}

/// `$PMTK705,<release>,<build>,<model>[,<internal>]`: the reply to PMTK605.
///
/// E.g. `$PMTK705,AXN_2.51_3339_19071200,0002,QUECTEL-L70,1.0*32` (gpsd regression suite).
public struct PMTKFirmware: Sendable, Hashable {
    /// Firmware release, e.g. `AXN_2.51_3339_19071200`.
    public var release: String
    /// Build identifier, e.g. `0002`.
    public var buildID: String
    /// The remaining fields (often the module name, e.g. `QUECTEL-L70`), empty ones dropped.
    public var details: [String]

    public init(release: String, buildID: String, details: [String] = []) {
        self.release = release
        self.buildID = buildID
        self.details = details
    }

    public init?(_ sentence: NMEASentence) {
        guard sentence.isProprietary, sentence.type == "MTK705", let release = sentence.field(0) else { return nil }
        self.init(
            release: String(release), buildID: sentence.field(1).map(String.init) ?? "",
            details: sentence.fields.dropFirst(2).filter { !$0.isEmpty }.map(String.init))
    }

    /// One line for people: `AXN_2.51_3339_19071200 build 0002 (QUECTEL-L70 1.0)`.
    public var summary: String {
        var text = release
        if !buildID.isEmpty { text += " build \(buildID)" }
        if !details.isEmpty { text += " (\(details.joined(separator: " ")))" }
        return text
    }
}
