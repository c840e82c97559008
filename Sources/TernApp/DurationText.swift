import Foundation

/// Durations as people write them in configs and on the command line: "90s", "15m", "2h", "30d", "500ms".
public enum DurationText {
    /// Parses "90s", "15m", "2h", "30d", "500ms", or a plain number of seconds.
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return seconds >= 0 && seconds.isFinite ? milliseconds(seconds * 1000) : nil }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            guard let number = Double(trimmed.dropLast(suffix.count)), number >= 0, number.isFinite else { return nil }
            return milliseconds(number * scale * 1000)
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

    private static func milliseconds(_ value: Double) -> Duration { .milliseconds(Int64(value.rounded())) }
}
