import Foundation
import TOMLKit

/// Typed, validated reads from one TOML table, remembering which keys were used so that unknown
/// (misspelt) keys can be reported. Every error names the full key and what is expected. With a
/// `ConfigTrace`, every key read is noted with its effective value and where it came from.
struct ConfigReader {
    private let table: TOMLTable
    private let prefix: String
    private let trace: ConfigTrace?
    private var used: Set<String> = []

    init(table: TOMLTable, prefix: String, trace: ConfigTrace? = nil) {
        self.table = table
        self.prefix = prefix
        self.trace = trace
    }

    /// Notes a key's effective value: `raw` when the file set it, else the default's text.
    private func noted<T>(_ name: String, _ result: T, raw: TOMLValueConvertible?, default text: @autoclosure () -> String) -> T {
        trace?.note(key: key(name), value: raw.map(shown) ?? text(), fromFile: raw != nil)
        return result
    }

    private func key(_ name: String) -> String { prefix.isEmpty ? name : "\(prefix).\(name)" }

    private mutating func value(_ name: String) -> TOMLValueConvertible? {
        used.insert(name)
        return table[name]
    }

    private func shown(_ value: TOMLValueConvertible) -> String {
        if let s = value.string { return "\"\(s)\"" }
        return value.debugDescription
    }

    mutating func table(_ name: String) throws(ConfigError) -> ConfigReader {
        guard let raw = value(name) else { return ConfigReader(table: TOMLTable(), prefix: key(name), trace: trace) }
        guard let table = raw.tomlValue.table else {
            throw ConfigError(key: key(name), "expected a table ([\(key(name))]), got \(shown(raw))")
        }
        return ConfigReader(table: table, prefix: key(name), trace: trace)
    }

    /// Fails on the first key that was not read (or is not in `known`, when given).
    func rejectUnknownKeys(known: Set<String>? = nil) throws(ConfigError) {
        let expected = known ?? used
        if let first = table.keys.filter({ !expected.contains($0) }).sorted().first {
            throw ConfigError(key: key(first), "unknown key (a typo?); known keys here: \(expected.sorted().joined(separator: ", "))")
        }
    }

    mutating func string(
        _ name: String, default fallback: String, pattern: String, valid: (String) -> Bool
    ) throws(ConfigError) -> String {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\"\(fallback)\"") }
        guard let s = raw.string, valid(s) else {
            throw ConfigError(key: key(name), "expected \(pattern), got \(shown(raw))")
        }
        return noted(name, s, raw: raw, default: "")
    }

    mutating func optionalString(_ name: String) throws(ConfigError) -> String? {
        guard let raw = value(name) else { return noted(name, nil, raw: nil, default: "(unset)") }
        guard let s = raw.string else { throw ConfigError(key: key(name), "expected a string, got \(shown(raw))") }
        return noted(name, s.isEmpty ? nil : s, raw: raw, default: "")
    }

    mutating func choice(_ name: String, _ options: [String], default fallback: String) throws(ConfigError) -> String {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\"\(fallback)\"") }
        guard let s = raw.string, options.contains(s) else {
            throw ConfigError(key: key(name), "expected one of \(options.map { "\"\($0)\"" }.joined(separator: ", ")), got \(shown(raw))")
        }
        return noted(name, s, raw: raw, default: "")
    }

    mutating func bool(_ name: String, default fallback: Bool) throws(ConfigError) -> Bool {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\(fallback)") }
        guard let b = raw.bool else { throw ConfigError(key: key(name), "expected true or false, got \(shown(raw))") }
        return noted(name, b, raw: raw, default: "")
    }

    mutating func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\(fallback)") }
        guard let i = raw.int, range.contains(i) else {
            throw ConfigError(key: key(name), "expected an integer from \(range.lowerBound) to \(range.upperBound), got \(shown(raw))")
        }
        return noted(name, i, raw: raw, default: "")
    }

    mutating func int(_ name: String, default fallback: Int, allowed: [Int]) throws(ConfigError) -> Int {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\(fallback)") }
        guard let i = raw.int, allowed.contains(i) else {
            throw ConfigError(key: key(name), "expected one of \(allowed.map(String.init).joined(separator: ", ")), got \(shown(raw))")
        }
        return noted(name, i, raw: raw, default: "")
    }

    mutating func double(_ name: String, default fallback: Double, range: ClosedRange<Double>) throws(ConfigError) -> Double {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\(fallback)") }
        guard let d = raw.double ?? raw.int.map(Double.init), range.contains(d) else {
            throw ConfigError(key: key(name), "expected a number from \(range.lowerBound) to \(range.upperBound), got \(shown(raw))")
        }
        return noted(name, d, raw: raw, default: "")
    }

    /// A duration: a number of seconds, or a string such as "90s", "15m", "2h", "500ms".
    mutating func duration(_ name: String, default fallback: Duration, range: ClosedRange<Duration>) throws(ConfigError) -> Duration {
        guard let raw = value(name) else { return noted(name, fallback, raw: nil, default: "\"\(DurationText.format(fallback))\"") }
        let parsed: Duration? =
            if let i = raw.int { .seconds(i) } else if let d = raw.double { DurationText.fromSeconds(d) } else { raw.string.flatMap(DurationText.parse) }
        guard let duration = parsed, range.contains(duration) else {
            throw ConfigError(
                key: key(name),
                "expected a duration from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)) such as \"90s\", \"15m\" or a number of seconds, got \(shown(raw))")
        }
        return noted(name, duration, raw: raw, default: "")
    }

    /// A duration that may be absent (nil).
    mutating func optionalDuration(_ name: String, range: ClosedRange<Duration>) throws(ConfigError) -> Duration? {
        guard value(name) != nil else { return noted(name, nil, raw: nil, default: "(unset)") }
        return try duration(name, default: .zero, range: range)
    }

    mutating func url(_ name: String, required: Bool, schemes: [String] = ["http", "https"]) throws(ConfigError) -> URL? {
        let example = schemes.contains("mqtt") ? "mqtts://broker.example.com:8883" : "https://tracker.example.com/positions"
        guard let raw = value(name) else {
            if required { throw ConfigError(key: key(name), "missing: set the server's URL, e.g. url = \"\(example)\"") }
            return noted(name, nil, raw: nil, default: "(unset)")
        }
        guard let s = raw.string, let url = URL(string: s), schemes.contains(url.scheme ?? ""), url.host != nil else {
            let expected = schemes.map { "\($0)://" }.joined(separator: " or ")
            throw ConfigError(key: key(name), "expected a \(expected) URL for this uplink.protocol, e.g. \(example), got \(shown(raw))")
        }
        return noted(name, url, raw: raw, default: "")
    }

    mutating func gpioLine(_ name: String) throws(ConfigError) -> TernConfig.GPIOLineSpec {
        guard let raw = value(name) else {
            throw ConfigError(key: key(name), "missing: the GPIO line that powers the receiver, an offset (17) or a line name (\"GPS_EN\")")
        }
        if let i = raw.int, i >= 0 { return noted(name, .offset(i), raw: raw, default: "") }
        if let s = raw.string, !s.isEmpty { return noted(name, .name(s), raw: raw, default: "") }
        throw ConfigError(key: key(name), "expected a line offset (e.g. 17) or a line name (e.g. \"GPS_EN\"), got \(shown(raw))")
    }

    /// A calendar date `YYYY-MM-DD` (TOML local date or string), as UTC midnight.
    mutating func date(_ name: String) throws(ConfigError) -> Date? {
        guard let raw = value(name) else { return noted(name, nil, raw: nil, default: "(unset)") }
        let text: String? = raw.string ?? raw.date.map { String(format: "%04d-%02d-%02d", Int($0.year), Int($0.month), Int($0.day)) }
        guard let text, let date = Self.parseDay(text) else {
            throw ConfigError(key: key(name), "expected a date YYYY-MM-DD, e.g. 2026-11-21, got \(shown(raw))")
        }
        return noted(name, date, raw: raw, default: "")
    }

    static func parseDay(_ text: String) -> Date? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, (1980...2200).contains(parts[0]), (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
    }
}
