/// UBX messages Tern sends ("u-blox 8 / u-blox M8 Receiver Description incl. Protocol Specification",
/// UBX-13003221; gen9 configuration keys from the "u-blox M9/F9 Interface Description").
public enum UBXMessages {
    public enum Class {
        public static let nav: UInt8 = 0x01
        public static let rxm: UInt8 = 0x02
        public static let ack: UInt8 = 0x05
        public static let cfg: UInt8 = 0x06
        public static let mon: UInt8 = 0x0A
        /// Standard NMEA messages, as addressed by CFG-MSG.
        public static let nmea: UInt8 = 0xF0
    }

    /// Port protocol masks for CFG-PRT `inProtoMask` / `outProtoMask`.
    public struct Protocols: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let ubx = Protocols(rawValue: 1 << 0)
        public static let nmea = Protocols(rawValue: 1 << 1)
        public static let rtcm2 = Protocols(rawValue: 1 << 2)
        public static let rtcm3 = Protocols(rawValue: 1 << 5)
    }

    /// RXM-PMREQ wake-up sources.
    public struct WakeSources: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Any activity on UART RX (the first bytes are lost).
        public static let uartRX = WakeSources(rawValue: 1 << 3)
        public static let extInt0 = WakeSources(rawValue: 1 << 5)
        public static let extInt1 = WakeSources(rawValue: 1 << 6)
        public static let spiCS = WakeSources(rawValue: 1 << 7)
    }

    /// MON-VER poll (0x0A 0x04, empty payload); the reply is MON-VER itself.
    public static let pollVersion = UBXFrame(messageClass: Class.mon, messageID: 0x04)

    /// CFG-PRT (0x06 0x00) for UART1: 8N1 at `baudRate` with the given protocols.
    ///
    /// `mode` 0x08D0 = 8 data bits, no parity, 1 stop bit (bit 4 set for compatibility, §32.10.25).
    /// The receiver acknowledges at the old rate, then switches.
    public static func configureUART1(
        baudRate: Int, input: Protocols = [.ubx, .nmea], output: Protocols = [.ubx, .nmea]
    ) -> UBXFrame {
        var payload: [UInt8] = [0x01, 0x00, 0x00, 0x00]  // portID UART1, reserved, txReady off
        payload += le32(0x0000_08D0) + le32(UInt32(clamping: baudRate))
        payload += le16(input.rawValue) + le16(output.rawValue) + le16(0) + [0, 0]
        return UBXFrame(messageClass: Class.cfg, messageID: 0x00, payload: payload)
    }

    /// CFG-MSG (0x06 0x01), short form: output `sentence` every `rate` fixes on the port this is sent on.
    public static func setMessageRate(_ sentence: NMEASentenceKind, rate: UInt8) -> UBXFrame {
        UBXFrame(messageClass: Class.cfg, messageID: 0x01, payload: [Class.nmea, nmeaMessageID(sentence), rate])
    }

    /// The UBX message id of a standard NMEA sentence in class 0xF0.
    public static func nmeaMessageID(_ sentence: NMEASentenceKind) -> UInt8 {
        switch sentence {
        case .gga: 0x00
        case .gll: 0x01
        case .gsa: 0x02
        case .gsv: 0x03
        case .rmc: 0x04
        case .vtg: 0x05
        case .grs: 0x06
        case .gst: 0x07
        case .zda: 0x08
        }
    }

    /// CFG-RATE (0x06 0x08): measurement period in ms, one navigation solution per measurement, GPS time.
    public static func setMeasurementRate(milliseconds: UInt16) -> UBXFrame {
        UBXFrame(messageClass: Class.cfg, messageID: 0x08, payload: le16(milliseconds) + le16(1) + le16(1))
    }

    /// RXM-PMREQ (0x02 0x41), 16-byte form (protocol 18+): enter backup for `milliseconds`
    /// (0 = until woken) and wake on `wakeSources`.
    public static func backup(milliseconds: UInt32, wakeSources: WakeSources) -> UBXFrame {
        let flags: UInt32 = 1 << 1  // backup
        let payload: [UInt8] = [0x00, 0, 0, 0] + le32(milliseconds) + le32(flags) + le32(wakeSources.rawValue)
        return UBXFrame(messageClass: Class.rxm, messageID: 0x41, payload: payload)
    }

    /// RXM-PMREQ 8-byte form (any protocol version): backup for `milliseconds`, 0 = until EXTINT or reset.
    public static func legacyBackup(milliseconds: UInt32) -> UBXFrame {
        UBXFrame(messageClass: Class.rxm, messageID: 0x41, payload: le32(milliseconds) + le32(1 << 1))
    }

    static func le16(_ value: UInt16) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    static func le32(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
