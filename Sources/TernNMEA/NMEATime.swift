import Foundation

/// A UTC time of day as a receiver reports it (`hhmmss.sss`), to the millisecond.
public struct NMEATimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let millisecondsSinceMidnight: Int

    public init?(hour: Int, minute: Int, second: Int, millisecond: Int = 0) {
        // second 60 is a leap second.
        guard (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second),
            (0..<1000).contains(millisecond)
        else { return nil }
        millisecondsSinceMidnight = ((hour * 60 + minute) * 60 + second) * 1000 + millisecond
    }

    /// Parses `hhmmss` or `hhmmss.s...` (fractions beyond milliseconds are rounded down).
    public init?(nmea text: Substring) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 6, bytes[0..<6].allSatisfy(isDigit) else { return nil }
        var millisecond = 0
        if bytes.count > 6 {
            let fraction = bytes[7...]
            guard bytes[6] == UInt8(ascii: "."), fraction.allSatisfy(isDigit) else { return nil }
            for (place, digit) in zip([100, 10, 1], fraction) {
                millisecond += Int(digit - UInt8(ascii: "0")) * place
            }
        }
        func number(_ at: Int) -> Int { Int(bytes[at] - 48) * 10 + Int(bytes[at + 1] - 48) }
        self.init(hour: number(0), minute: number(2), second: number(4), millisecond: millisecond)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.millisecondsSinceMidnight < rhs.millisecondsSinceMidnight
    }

    public var description: String {
        let ms = millisecondsSinceMidnight
        return "\(pad(ms / 3_600_000)):\(pad(ms / 60_000 % 60)):\(pad(ms / 1000 % 60)).\(ms % 1000)"
    }
}

/// A calendar date (UTC) from an RMC/ZDA sentence, with the year already resolved to four digits.
public struct NMEADate: Sendable, Hashable, Comparable {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `ddmmyy`, choosing the century that puts the year within 50 years of `reference`.
    public init?(ddmmyy text: Substring, reference: Date) {
        let bytes = Array(text.utf8)
        guard bytes.count == 6, bytes.allSatisfy(isDigit) else { return nil }
        func number(_ at: Int) -> Int { Int(bytes[at] - 48) * 10 + Int(bytes[at + 1] - 48) }
        self.init(
            year: Self.resolve(twoDigitYear: number(4), reference: reference), month: number(2), day: number(0))
    }

    /// The four-digit year nearest to the reference date's year that ends in `twoDigitYear`.
    public static func resolve(twoDigitYear: Int, reference: Date) -> Int {
        let referenceYear = CivilDate(daysSinceEpoch: Int((reference.timeIntervalSince1970 / 86_400).rounded(.down))).year
        var year = referenceYear - referenceYear % 100 + twoDigitYear
        if year > referenceYear + 50 { year -= 100 }
        if year <= referenceYear - 50 { year += 100 }
        return year
    }

    /// Days since 1970-01-01.
    var daysSinceEpoch: Int { CivilDate(year: year, month: month, day: day).daysSinceEpoch }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// The instant at `time` on this date, UTC.
    public func date(at time: NMEATimeOfDay) -> Date {
        Date(timeIntervalSince1970: Double(daysSinceEpoch) * 86_400 + Double(time.millisecondsSinceMidnight) / 1000)
    }
}

/// Proleptic Gregorian date arithmetic (H. Hinnant's days-from-civil), without Calendar.
struct CivilDate {
    var year: Int
    var month: Int
    var day: Int

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    init(daysSinceEpoch days: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

private func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

private func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
