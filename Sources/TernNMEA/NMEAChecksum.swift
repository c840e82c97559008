/// The NMEA 0183 checksum: XOR of every byte between `$` (or `!`) and `*`.
public enum NMEAChecksum {
    /// The checksum of `body` (the characters between the start delimiter and `*`).
    public static func compute(_ body: some Sequence<UInt8>) -> UInt8 {
        body.reduce(0, ^)
    }

    /// Two upper-case hex digits, as written after `*`.
    public static func hex(_ value: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(value >> 4)], digits[Int(value & 0x0F)]])
    }

    /// Parses two hex digits (upper or lower case); nil when malformed.
    static func parse(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard let h = hexValue(high), let l = hexValue(low) else { return nil }
        return h << 4 | l
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
