import Foundation
import TernCore

/// One fix in gpsd's per-epoch JSON form, as `tern nmea decode` prints it:
///
///     {"time":"2017-01-10T00:09:41.000Z","lat":44.068897833,"lon":-121.314271333,"alt":1144.8,
///      "speed":0.015,"track":null,"mode":3,"quality":1,"sats":8,"hdop":1.1,...}
///
/// The first seven keys are gpsd's (`null` where unknown); Tern's extras follow and are left
/// out when unknown: `quality` (GGA fix quality code), `sats` (used), `hdop`, `vdop`, `pdop`,
/// `geoid` (separation, m), `acc` (1 σ horizontal accuracy, m) and `inview`.
public struct GPSDFixRecord: Sendable, Hashable {
    public var fix: Fix

    public init(_ fix: Fix) {
        self.fix = fix
    }

    /// Appends the record as one JSON line (with `\n`) to `output`.
    public func write(to output: inout [UInt8]) {
        var json = JSONLineWriter(output: output)
        output = []
        json.raw("{\"time\":\"")
        json.iso8601(fix.time)
        json.raw("\",\"lat\":")
        json.number(fix.coordinate.latitude, decimals: 9)
        json.raw(",\"lon\":")
        json.number(fix.coordinate.longitude, decimals: 9)
        json.raw(",\"alt\":")
        json.number(fix.altitude, decimals: 4)
        json.raw(",\"speed\":")
        json.number(fix.speed, decimals: 3)
        json.raw(",\"track\":")
        json.number(fix.course, decimals: 4)
        json.raw(",\"mode\":")
        json.integer(fix.mode.rawValue)
        json.raw(",\"quality\":")
        json.integer(fix.quality.rawValue)
        json.optional("sats", fix.satellites)
        json.optional("hdop", fix.hdop, decimals: 2)
        json.optional("vdop", fix.vdop, decimals: 2)
        json.optional("pdop", fix.pdop, decimals: 2)
        json.optional("geoid", fix.geoidSeparation, decimals: 3)
        json.optional("acc", fix.accuracy, decimals: 3)
        json.optional("inview", fix.satellitesInView)
        json.raw("}\n")
        output = json.output
    }

    /// The record as a JSON line (with `\n`).
    public var jsonLine: String {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A minimal, allocation-free JSON writer for numbers, nulls and fixed keys.
struct JSONLineWriter {
    var output: [UInt8]

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    mutating func integer(_ value: Int) {
        if value < 0 {
            output.append(UInt8(ascii: "-"))
            digits(UInt64(-value), minimumWidth: 1)
        } else {
            digits(UInt64(value), minimumWidth: 1)
        }
    }

    mutating func optional(_ key: StaticString, _ value: Int?) {
        guard let value else { return }
        writeKey(key)
        integer(value)
    }

    mutating func optional(_ key: StaticString, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        writeKey(key)
        number(value, decimals: decimals)
    }

    private mutating func writeKey(_ name: StaticString) {
        output.append(UInt8(ascii: ","))
        output.append(UInt8(ascii: "\""))
        raw(name)
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }

    private static let scales: [Double] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// `value` rounded to `decimals` places, trailing zeros dropped (at least one decimal); `null` when nil.
    mutating func number(_ value: Double?, decimals: Int) {
        guard let value, value.isFinite, abs(value) < 1e9 else {
            raw("null")
            return
        }
        let scaled = (abs(value) * Self.scales[decimals]).rounded()
        var units = UInt64(scaled)
        var places = decimals
        while places > 1, units % 10 == 0 {
            units /= 10
            places -= 1
        }
        var divisor: UInt64 = 1
        for _ in 0..<places { divisor *= 10 }
        if value < 0, units != 0 { output.append(UInt8(ascii: "-")) }
        digits(units / divisor, minimumWidth: 1)
        output.append(UInt8(ascii: "."))
        digits(units % divisor, minimumWidth: places)
    }

    /// `yyyy-mm-ddThh:mm:ss.sssZ`.
    mutating func iso8601(_ date: Date) {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded())
        let (days, ofDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, ms) = ofDay < 0 ? (days - 1, ofDay + 86_400_000) : (days, ofDay)
        let civil = CivilDate(daysSinceEpoch: day)
        digits(UInt64(max(0, civil.year)), minimumWidth: 4)
        output.append(UInt8(ascii: "-"))
        digits(UInt64(civil.month), minimumWidth: 2)
        output.append(UInt8(ascii: "-"))
        digits(UInt64(civil.day), minimumWidth: 2)
        output.append(UInt8(ascii: "T"))
        digits(UInt64(ms / 3_600_000), minimumWidth: 2)
        output.append(UInt8(ascii: ":"))
        digits(UInt64(ms / 60_000 % 60), minimumWidth: 2)
        output.append(UInt8(ascii: ":"))
        digits(UInt64(ms / 1000 % 60), minimumWidth: 2)
        output.append(UInt8(ascii: "."))
        digits(UInt64(ms % 1000), minimumWidth: 3)
        output.append(UInt8(ascii: "Z"))
    }

    private mutating func digits(_ value: UInt64, minimumWidth: Int) {
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for UInt64's 20 digits
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &buffer) { bytes in
            repeat {
                bytes[23 - count] = UInt8(truncatingIfNeeded: rest % 10) + 48
                rest /= 10
                count += 1
            } while rest > 0 || count < minimumWidth
            output.append(contentsOf: bytes[(24 - count)...])
        }
    }
}
