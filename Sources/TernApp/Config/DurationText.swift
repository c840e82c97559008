import Foundation

/// Durations as people write them in configs and on the command line: "90s", "15m", "2h", "30d", "500ms".
public enum DurationText {
    /// Parses "90s", "15m", "2h", "30d", "500ms", or a plain number of seconds.
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return fromSeconds(seconds) }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            guard let number = Double(trimmed.dropLast(suffix.count)) else { return nil }
            return fromSeconds(number * scale)
        }
        return nil
    }

    /// The shortest exact form: "30d", "2h", "15m", "90s", "500ms".
    public static func format(_ duration: Duration) -> String {
        let s = duration.components.seconds
        let ms = duration.components.attoseconds / 1_000_000_000_000_000
        if ms != 0 { return "\(s * 1000 + ms)ms" }
        if s >= 86_400 && s % 86_400 == 0 { return "\(s / 86_400)d" }
        if s >= 3600 && s % 3600 == 0 { return "\(s / 3600)h" }
        if s >= 60 && s % 60 == 0 { return "\(s / 60)m" }
        return "\(s)s"
    }

    /// A number of seconds as a duration to the millisecond; nil when negative, not finite, or beyond
    /// a thousand years (which no setting means, and which would not fit the milliseconds' integer).
    public static func fromSeconds(_ seconds: Double) -> Duration? {
        guard seconds.isFinite, seconds >= 0, seconds <= 1000 * 365.25 * 86_400 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
