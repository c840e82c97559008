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
        self.init(nmeaBytes: text.utf8)
    }

    /// `init(nmea:)` from the field's UTF-8 bytes.
    init?(nmeaBytes text: some Sequence<UInt8>) {
        var hhmmss = 0
        var millisecond = 0
        var place = 100
        var index = 0
        for byte in text {
            switch index {
            case 0..<6:
                guard isDigit(byte) else { return nil }
                hhmmss = hhmmss * 10 + Int(byte &- 48)
            case 6:
                guard byte == UInt8(ascii: ".") else { return nil }
            default:
                guard isDigit(byte) else { return nil }
                millisecond += Int(byte &- 48) * place
                place /= 10
            }
            index += 1
        }
        guard index >= 6 else { return nil }
        self.init(
            hour: hhmmss / 10_000, minute: hhmmss / 100 % 100, second: hhmmss % 100, millisecond: millisecond)
    }

    /// Milliseconds since midnight, wrapped into one day.
    /// The UTC time of day of `date`, to the nearest millisecond.
    public init(of date: Date) {
        self.init(wrapping: Int((date.timeIntervalSince1970 * 1000).rounded()))
    }

    init(wrapping milliseconds: Int) {
        let day = 86_400_000
        millisecondsSinceMidnight = (milliseconds % day + day) % day
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

    /// Years a receiver can mean: GPS time began in 1980; anything else is garbage.
    public static let plausibleYears = 1980...2200

    public init?(year: Int, month: Int, day: Int) {
        guard Self.plausibleYears.contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `ddmmyy`, choosing the century that puts the year within 50 years of `reference`.
    ///
    /// Does not correct GPS week rollover: see `resolvingWeekRollover(_:)`.
    public init?(ddmmyy text: Substring, reference: Date) {
        guard text.utf8.count == 6, let value = NMEANumber.int(text), value >= 0, text.utf8.allSatisfy(isDigit)
        else { return nil }
        self.init(
            year: Self.resolve(twoDigitYear: value % 100, reference: reference), month: value / 100 % 100,
            day: value / 10_000)
    }

    /// Days in one GPS week-number era (1024 weeks, about 19.6 years).
    public static let weekRolloverDays = 1024 * 7

    /// How far before a lower-bound reference a date may lie before it is taken for a week-rollover
    /// victim: half an era (512 weeks, about 9.8 years).
    public static let rolloverToleranceDays = 512 * 7

    /// How far a receiver date may lie from a clock's date (either way) and still agree with it: one day.
    public static let clockToleranceDays = 1

    /// This date moved forward by whole 1024-week eras while it lies more than 512 weeks before
    /// `reference`: what a receiver with a GPS week-rollover bug (reporting e.g. 1999 or 2006 for
    /// 2026) meant. Dates within 512 weeks before the reference, or after it, are unchanged.
    public func correctingWeekRollover(reference: Date) -> NMEADate {
        resolvingWeekRollover(.notBefore(reference)).date
    }

    /// The date a receiver meant, given what is known of today (`NMEADateReference`). A receiver with a
    /// GPS week-rollover bug reports a date whole 1024-week eras too early, never too late, so the
    /// candidates are this date and the ones whole eras after it:
    /// - against a clock, the latest candidate not after the clock's date + 1 day (a correction never
    ///   makes a date in the future); none (the receiver is ahead of the clock) keeps this date. With a
    ///   synchronised clock, a result more than a day from it is not trusted: no candidate fits.
    /// - against a lower bound, the first candidate within 512 weeks before it or after it; always
    ///   trusted (now may be any time after the bound).
    public func resolvingWeekRollover(_ reference: NMEADateReference) -> NMEADateResolution {
        let days = daysSinceEpoch
        let era = Self.weekRolloverDays
        switch reference {
        case let .notBefore(bound):
            let limit = Self.day(of: bound) - Self.rolloverToleranceDays
            guard days < limit else { return NMEADateResolution(date: self, trusted: true) }
            let eras = (limit - days + era - 1) / era
            return NMEADateResolution(date: NMEADate(daysSinceEpoch: days + eras * era), trusted: true)
        case let .clock(now, synchronised):
            let today = Self.day(of: now)
            let latest = today + Self.clockToleranceDays
            let resolved = days > latest ? days : days + (latest - days) / era * era
            let agrees = abs(resolved - today) <= Self.clockToleranceDays
            let date = resolved == days ? self : NMEADate(daysSinceEpoch: resolved)
            return NMEADateResolution(date: date, trusted: agrees || !synchronised)
        }
    }

    /// Whole days from 1970-01-01 to the UTC day of `date`.
    static func day(of date: Date) -> Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// The date `days` days after 1970-01-01.
    init(daysSinceEpoch days: Int) {
        let civil = CivilDate(daysSinceEpoch: days)
        year = civil.year
        month = civil.month
        day = civil.day
    }

    /// The date `count` days later (or earlier when negative).
    func adding(days count: Int) -> NMEADate { NMEADate(daysSinceEpoch: daysSinceEpoch + count) }

    /// The four-digit year nearest to the reference date's year that ends in `twoDigitYear`.
    public static func resolve(twoDigitYear: Int, reference: Date) -> Int {
        let referenceYear = CivilDate(daysSinceEpoch: day(of: reference)).year
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

/// What a decoder knows of today's date, to resolve two-digit years and GPS week rollovers
/// (`NMEADate.resolvingWeekRollover(_:)`).
public enum NMEADateReference: Sendable, Hashable {
    /// A clock taken for now: the system clock (ahead of the build date). `synchronised` when it is known
    /// to be set from a time source (NTP): then a receiver date that fits no candidate is untrusted.
    case clock(Date, synchronised: Bool)
    /// Only a lower bound on now: the build date, a configured `reference_date`, a log's `# Date:`.
    case notBefore(Date)

    /// The date itself.
    public var date: Date {
        switch self {
        case let .clock(date, _), let .notBefore(date): date
        }
    }
}

/// A receiver date as resolved against a reference: the date meant, and whether it can be trusted.
public struct NMEADateResolution: Sendable, Hashable {
    public var date: NMEADate
    /// False when a synchronised clock disagrees with every candidate (a replayed log, a receiver
    /// whose date is garbage): the fix's time must not order fixes.
    public var trusted: Bool
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
