/// CFG-VALSET (0x06 0x8A) for generation 9+ receivers (M9, M10, F9), which replace CFG-PRT/CFG-MSG
/// with key/value configuration ("u-blox M9 SPG 4.04 Interface Description", UBX-21022436, §6).
public struct UBXConfigKey: Sendable, Hashable {
    public var id: UInt32

    public init(_ id: UInt32) {
        self.id = id
    }

    /// Value size in bytes, from bits 28…30 of the key (1 = one bit stored in a byte).
    public var valueSize: Int {
        switch (id >> 28) & 0x7 {
        case 1, 2: 1
        case 3: 2
        case 4: 4
        default: 8
        }
    }

    /// CFG-UART1-BAUDRATE (U4).
    public static let uart1BaudRate = UBXConfigKey(0x4052_0001)
    /// CFG-RATE-MEAS (U2, ms).
    public static let rateMeasurement = UBXConfigKey(0x3021_0001)

    /// CFG-MSGOUT-NMEA_ID_<sentence>_UART1 (U1, every N navigation solutions).
    public static func nmeaOutputUART1(_ sentence: NMEASentenceKind) -> UBXConfigKey {
        switch sentence {
        case .gga: UBXConfigKey(0x2091_00BB)
        case .gll: UBXConfigKey(0x2091_00CA)
        case .gsa: UBXConfigKey(0x2091_00C0)
        case .gsv: UBXConfigKey(0x2091_00C5)
        case .rmc: UBXConfigKey(0x2091_00AC)
        case .vtg: UBXConfigKey(0x2091_00B1)
        case .grs: UBXConfigKey(0x2091_00CF)
        case .gst: UBXConfigKey(0x2091_00D4)
        case .zda: UBXConfigKey(0x2091_00D9)
        }
    }
}

/// Configuration layers a CFG-VALSET writes to.
public struct UBXConfigLayers: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let ram = UBXConfigLayers(rawValue: 1 << 0)
    public static let bbr = UBXConfigLayers(rawValue: 1 << 1)
    public static let flash = UBXConfigLayers(rawValue: 1 << 2)
}

extension UBXMessages {
    /// CFG-VALSET version 0: sets each key to its value (little-endian, truncated to the key's size).
    public static func setValues(_ values: [(UBXConfigKey, UInt64)], layers: UBXConfigLayers = .ram) -> UBXFrame {
        var payload: [UInt8] = [0x00, layers.rawValue, 0, 0]
        for (key, value) in values {
            payload += le32(key.id) + (0..<key.valueSize).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        return UBXFrame(messageClass: Class.cfg, messageID: 0x8A, payload: payload)
    }
}
