import TernNMEA

/// Works out the chipset from what a receiver says (pure; feed it every message).
///
/// Evidence, strongest first: a `$PMTK705` reply or UBX MON-VER (conclusive, with the version);
/// then any `$PMTK…` sentence (e.g. the `$PMTK011,MTKGPS` boot message), `$PUBX` or UBX frame;
/// then `$GPTXT`/`$GNTXT` text (u-blox prints `u-blox`, `HW UBX…`, `PROTVER=…`; MediaTek `MTK`).
/// Conclusive evidence overrides weaker evidence of another family; otherwise the first family seen stays.
public struct ChipsetDetector: Sendable {
    public private(set) var chipset: Chipset = .unknown
    /// Whether the chipset was identified with its firmware/version (`$PMTK705`, MON-VER).
    public private(set) var isConclusive = false

    public init() {}

    @discardableResult
    public mutating func observe(_ message: ReceiverMessage) -> Chipset {
        guard !isConclusive, let (evidence, conclusive) = Self.evidence(in: message) else { return chipset }
        if conclusive || chipset == .unknown {
            chipset = evidence
            isConclusive = conclusive
            return chipset
        }
        switch (chipset, evidence) {
        case (.ublox(let old), .ublox(let new?)):
            chipset = .ublox(version: old.map { $0 + ", " + new } ?? new)
        case (.mediatek(nil), .mediatek(_?)):
            chipset = evidence
        default:
            break
        }
        return chipset
    }

    static func evidence(in message: ReceiverMessage) -> (Chipset, conclusive: Bool)? {
        switch message {
        case .ubx(let frame):
            if let version = UBXVersion(frame) { return (.ublox(version: version.summary), true) }
            return (.ublox(version: nil), false)
        case .nmea(let sentence):
            if let firmware = PMTKFirmware(sentence) { return (.mediatek(firmware: firmware.summary), true) }
            if sentence.isProprietary, sentence.type.hasPrefix("MTK") { return (.mediatek(firmware: nil), false) }
            if sentence.isProprietary, sentence.type == "UBX" { return (.ublox(version: nil), false) }
            if sentence.type == "TXT" { return textEvidence(sentence.fields.dropFirst(3).joined(separator: ",")) }
            return nil
        }
    }

    private static let ubloxMarkers = [
        "U-BLOX", "HW UBX", "UBX-", "PROTVER", "ANTARIS", "ROM CORE", "EXT CORE", "FWVER",
    ]
    private static let ubloxVersionPrefixes = ["ROM CORE", "EXT CORE", "FWVER", "PROTVER", "MOD"]

    static func textEvidence(_ text: String) -> (Chipset, conclusive: Bool)? {
        let upper = text.uppercased()
        if ubloxMarkers.contains(where: upper.contains) {
            let trimmed = text.trimmingSpaces
            let isVersion = ubloxVersionPrefixes.contains { upper.hasPrefix($0) }
            return (.ublox(version: isVersion ? trimmed : nil), false)
        }
        if upper.contains("MTK") || upper.contains("MEDIATEK") { return (.mediatek(firmware: nil), false) }
        return nil
    }
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
