import Foundation
import TernCore

/// Encodes fixes as NMEA 0183 sentences (`$...*HH\r\n`), as a receiver would send them.
///
/// Pure: the simulated GPS uses it to produce a realistic byte stream.
public struct NMEAWriter: Sendable {
    /// Talker for every sentence written, e.g. `GP` or `GN`.
    public var talker: String

    public init(talker: String = "GP") {
        self.talker = talker
    }

    /// GGA then RMC for one receiver cycle.
    public func sentences(for fix: Fix) -> [String] {
        [gga(fix), rmc(fix)]
    }

    /// A whole receiver cycle as an MT3339 sends it by default: GGA, GSA, GSV (the satellites in view,
    /// `inView` of them with a signal), RMC, VTG. The same sentences with or without a fix, so that a
    /// reader learns where a cycle ends while the receiver is still acquiring.
    public func cycle(for fix: Fix, inView: Int) -> [String] {
        [gga(fix), gsa(fix)] + gsv(heard: inView) + [rmc(fix), vtg(fix)]
    }

    /// `cycle(for:inView:)` while acquiring: no position, GSA mode 1, `heard` satellites with a signal.
    public func noFixCycle(at time: Date, heard: Int) -> [String] {
        let fix = Fix.noFix(time: time, satellitesHeard: heard)
        let (date, clock) = Self.utc(time)
        return [
            sentence("GGA", [clock, "", "", "", "", "0", "00", "99.99", "", "", "", "", "", ""]), gsa(fix),
        ] + gsv(heard: heard) + [
            sentence("RMC", [clock, "V", "", "", "", "", "", "", date, "", "", "N"]), vtg(fix),
        ]
    }

    /// A GSA sentence: mode 3 with the first `satellites` ids used for a usable fix, else mode 1.
    public func gsa(_ fix: Fix) -> String {
        let usable = fix.quality.isUsable
        let ids = (0..<(usable ? min(fix.satellites ?? 0, 12) : 0)).map { "\($0 + 1)" }
        let hdop = usable ? (fix.hdop ?? 99.99) : 99.99
        return sentence("GSA", ["A", usable ? "3" : "1"] + ids + Array(repeating: "", count: 12 - ids.count) + [
            Self.fixed(hdop * 1.6, 2), Self.fixed(hdop, 2), Self.fixed(hdop * 1.3, 2),
        ])
    }

    /// A VTG sentence: course true, magnetic empty, speed in knots and km/h; mode `N` without a fix.
    public func vtg(_ fix: Fix) -> String {
        let usable = fix.quality.isUsable
        let speed = usable ? fix.speed : nil
        return sentence("VTG", [
            (usable ? fix.course : nil).map { Self.fixed($0, 2) } ?? "", "T", "", "M",
            speed.map { Self.fixed($0 / RMCMessage.metresPerSecondPerKnot, 3) } ?? "", "N",
            speed.map { Self.fixed($0 * 3.6, 3) } ?? "", "K", Self.mode(fix.quality),
        ])
    }

    /// What a receiver sends while acquiring: GGA quality 0 and RMC status `V`, empty position, and
    /// when `heard` is given a GPS GSV listing that many satellites with a signal (SNR 30–37 dB-Hz).
    public func noFixSentences(at time: Date, heard: Int? = nil) -> [String] {
        let (date, clock) = Self.utc(time)
        var sentences = [
            sentence("GGA", [clock, "", "", "", "", "0", "00", "99.99", "", "", "", "", "", ""]),
            sentence("RMC", [clock, "V", "", "", "", "", "", "", date, "", "", "N"]),
        ]
        if let heard { sentences += gsv(heard: heard) }
        return sentences
    }

    /// GPS GSV parts for `heard` satellites with a signal (ids 1…, made-up elevation and azimuth).
    public func gsv(heard: Int) -> [String] {
        let satellites = (0..<max(heard, 0)).map { ["\($0 + 1)", "\(20 + 5 * $0)", "\(40 * $0 % 360)", "\(30 + $0 % 8)"] }
        let parts = max(1, (satellites.count + 3) / 4)
        return (0..<parts).map { part in
            let chunk = satellites.dropFirst(part * 4).prefix(4).flatMap { $0 }
            return sentence("GSV", ["\(parts)", "\(part + 1)", "\(satellites.count)"] + chunk)
        }
    }

    /// A GGA sentence for `fix` (geoid separation, DGPS age and station left empty).
    public func gga(_ fix: Fix) -> String {
        let (_, clock) = Self.utc(fix.time)
        let (lat, ns, lon, ew) = Self.position(fix.coordinate)
        return sentence("GGA", [
            clock, lat, ns, lon, ew, "\(fix.quality.rawValue)",
            fix.satellites.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "",
            fix.hdop.map { Self.fixed($0, 2) } ?? "",
            fix.altitude.map { Self.fixed($0, 1) } ?? "", "M", "", "M", "", "",
        ])
    }

    /// An RMC sentence for `fix`; status `A` when its quality is usable, else `V`.
    public func rmc(_ fix: Fix) -> String {
        let (date, clock) = Self.utc(fix.time)
        let (lat, ns, lon, ew) = Self.position(fix.coordinate)
        let valid = fix.quality.isUsable
        return sentence("RMC", [
            clock, valid ? "A" : "V", lat, ns, lon, ew,
            fix.speed.map { Self.fixed($0 / RMCMessage.metresPerSecondPerKnot, 3) } ?? "",
            fix.course.map { Self.fixed($0, 2) } ?? "",
            date, "", "", Self.mode(fix.quality),
        ])
    }

    /// Frames a sentence: `$` + talker + type + fields + `*HH` + CRLF.
    public func sentence(_ type: String, _ fields: [String]) -> String {
        let body = ([talker + type] + fields).joined(separator: ",")
        return "$\(body)*\(NMEAChecksum.hex(NMEAChecksum.compute(body.utf8)))\r\n"
    }

    // MARK: - Formatting

    private static func mode(_ quality: FixQuality) -> String {
        switch quality {
        case .invalid: "N"
        case .gps, .pps: "A"
        case .dgps: "D"
        case .rtkFixed: "R"
        case .rtkFloat: "F"
        case .estimated: "E"
        case .manual: "M"
        case .simulation: "S"
        }
    }

    /// `ddmmyy` and `hhmmss.ss` for an instant, UTC.
    static func utc(_ time: Date) -> (date: String, clock: String) {
        let centiseconds = Int((time.timeIntervalSince1970 * 100).rounded())
        let (days, ofDay) = centiseconds.quotientAndRemainder(dividingBy: 8_640_000)
        let (day, cs) = ofDay < 0 ? (days - 1, ofDay + 8_640_000) : (days, ofDay)
        let civil = CivilDate(daysSinceEpoch: day)
        let seconds = cs / 100
        return (
            digits(civil.day, 2) + digits(civil.month, 2) + digits(civil.year % 100, 2),
            digits(seconds / 3600, 2) + digits(seconds / 60 % 60, 2) + digits(seconds % 60, 2) + "."
                + digits(cs % 100, 2)
        )
    }

    /// `ddmm.mmmmm,N,dddmm.mmmmm,E` (5 decimals of a minute: about 2 cm).
    static func position(_ coordinate: Coordinate) -> (String, String, String, String) {
        func encode(_ value: Double, degreeDigits: Int) -> String {
            let scale = 100_000
            let total = Int((abs(value) * 60 * Double(scale)).rounded())
            let (degrees, minuteUnits) = total.quotientAndRemainder(dividingBy: 60 * scale)
            let (minutes, fraction) = minuteUnits.quotientAndRemainder(dividingBy: scale)
            return digits(degrees, degreeDigits) + digits(minutes, 2) + "." + digits(fraction, 5)
        }
        return (
            encode(coordinate.latitude, degreeDigits: 2), coordinate.latitude < 0 ? "S" : "N",
            encode(coordinate.longitude, degreeDigits: 3), coordinate.longitude < 0 ? "W" : "E"
        )
    }

    /// A non-negative-aware fixed-point rendering with `decimals` places, independent of locale.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        let (whole, fraction) = scaled.quotientAndRemainder(dividingBy: scale)
        return decimals == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(digits(fraction, decimals))"
    }

    private static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
