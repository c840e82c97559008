import Foundation
import TernCore

/// Why a trace file could not be loaded: the file, the line (when one is to blame) and the reason.
public struct TraceLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// 1-based line number, nil when the problem is the file as a whole.
    public var line: Int?
    public var reason: String

    public init(file: String, line: Int? = nil, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String {
        line.map { "\(file):\($0): \(reason)" } ?? "\(file): \(reason)"
    }
}

/// A loaded trace with what was read to make it.
public struct TraceFile: Sendable, Hashable {
    public enum Format: String, Sendable, Hashable { case gpx, csv }

    public var trace: Trace
    public var format: Format
    /// Points in the file: `<trkpt>`/`<rtept>` elements, or CSV data rows.
    public var pointCount: Int
    /// GPX points without a `<time>` (skipped: they cannot be placed in time).
    public var untimedCount: Int
}

/// Reads ground-truth trajectories: GPX 1.0/1.1 track and route points, and `time,lat,lon` CSV
/// with ISO-8601 UTC times. Hand-written scanners: no XML parser, one pass over the bytes.
public enum TraceLoader {
    /// Loads `path`; the format comes from the extension (`.gpx`, `.csv`), else from the content.
    public static func load(path: String) throws(TraceLoadError) -> TraceFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file"
            throw TraceLoadError(file: path, reason: reason)
        }
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let bytes = [UInt8](data)
        switch (path as NSString).pathExtension.lowercased() {
        case "gpx": return try gpx(bytes, name: name, file: path)
        case "csv": return try csv(bytes, name: name, file: path)
        default:
            let first = bytes.first { !isSpace($0) && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
            return first == UInt8(ascii: "<")
                ? try gpx(bytes, name: name, file: path) : try csv(bytes, name: name, file: path)
        }
    }

    /// Parses GPX text: every `<trkpt>` and `<rtept>` in every track, segment and route (any
    /// namespace prefix), with its `lat`/`lon` attributes and its first `<time>`.
    public static func gpx(_ bytes: [UInt8], name: String, file: String = "<gpx>") throws(TraceLoadError) -> TraceFile {
        var scanner = GPXScanner(bytes: bytes, file: file)
        let (points, count, untimed) = try scanner.scan()
        guard !points.isEmpty else {
            let reason = count == 0 ? "no <trkpt> or <rtept> points" : "none of the \(count) points has a <time>"
            throw TraceLoadError(file: file, reason: reason)
        }
        return TraceFile(trace: Trace(name: name, points: points), format: .gpx, pointCount: count, untimedCount: untimed)
    }

    /// Parses CSV text: `time,lat,lon` rows (ISO-8601 UTC). An optional header names the columns
    /// (`time`/`timestamp`, `lat`/`latitude`, `lon`/`lng`/`longitude`; others ignored); without
    /// one the columns are time, lat, lon. Blank lines and `#` comments are skipped.
    public static func csv(_ bytes: [UInt8], name: String, file: String = "<csv>") throws(TraceLoadError) -> TraceFile {
        var columns: (time: Int, lat: Int, lon: Int)?
        var points: [Trace.Point] = []
        var lineNumber = 0
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            lineNumber += 1
            var text = String(decoding: bytes[start..<end], as: UTF8.self)
            start = end + 1
            if text.hasSuffix("\r") { text.removeLast() }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
            }
            if columns == nil {
                if let header = headerColumns(fields) {
                    columns = header
                    continue
                }
                columns = (0, 1, 2)
            }
            guard let (timeColumn, latColumn, lonColumn) = columns else { continue }
            let needed = max(timeColumn, latColumn, lonColumn) + 1
            guard fields.count >= needed else {
                throw TraceLoadError(
                    file: file, line: lineNumber, reason: "expected \(needed) fields (time,lat,lon), found \(fields.count)")
            }
            guard let time = ISO8601.parse(fields[timeColumn]) else {
                throw TraceLoadError(
                    file: file, line: lineNumber, reason: "bad time '\(fields[timeColumn])' (expected ISO-8601 UTC, e.g. 2020-06-04T11:00:30Z)")
            }
            let coordinate = try coordinate(lat: fields[latColumn], lon: fields[lonColumn], file: file, line: lineNumber)
            points.append(Trace.Point(time: time, coordinate: coordinate))
        }
        guard !points.isEmpty else { throw TraceLoadError(file: file, reason: "no data rows (expected time,lat,lon)") }
        return TraceFile(trace: Trace(name: name, points: points), format: .csv, pointCount: points.count, untimedCount: 0)
    }

    private static func headerColumns(_ fields: [String]) -> (time: Int, lat: Int, lon: Int)? {
        let names = fields.map { $0.lowercased() }
        guard let time = names.firstIndex(where: { ["time", "timestamp", "datetime", "basedatetime"].contains($0) }),
            let lat = names.firstIndex(where: { ["lat", "latitude"].contains($0) }),
            let lon = names.firstIndex(where: { ["lon", "lng", "long", "longitude"].contains($0) })
        else { return nil }
        return (time, lat, lon)
    }

    static func coordinate(lat: String, lon: String, file: String, line: Int) throws(TraceLoadError) -> Coordinate {
        guard let latitude = Double(lat), latitude.isFinite, (-90...90).contains(latitude) else {
            throw TraceLoadError(file: file, line: line, reason: "bad latitude '\(lat)' (expected -90...90)")
        }
        guard let longitude = Double(lon), longitude.isFinite, (-180...180).contains(longitude) else {
            throw TraceLoadError(file: file, line: line, reason: "bad longitude '\(lon)' (expected -180...180)")
        }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// ISO-8601 timestamps as GPX and CSV traces write them: `2020-06-04T11:00:30Z`, with optional
/// fractional seconds and a `Z`, `±hh:mm` or `±hhmm` offset (none means UTC); a space may replace
/// the `T`. Parsed by hand (no formatter, no locale, thread-safe).
public enum ISO8601 {
    public static func parse(_ text: some StringProtocol) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ width: Int) -> Int? {
            guard i + width <= b.count else { return nil }
            var value = 0
            for k in i..<(i + width) {
                guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }
                value = value * 10 + Int(b[k] - 0x30)
            }
            i += width
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard i < b.count, characters.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 0.1
            let digitsStart = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                fraction += Double(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > digitsStart else { return nil }
        }
        var offset = 0
        if i < b.count {
            if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let hours = number(2) else { return nil }
                _ = expect(":")
                guard let minutes = number(2), hours <= 23, minutes <= 59 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// One pass over GPX bytes: tags, attributes, the text of `<time>` inside points; comments,
/// CDATA, processing instructions and everything else skipped. Counts lines as it goes.
private struct GPXScanner {
    let bytes: [UInt8]
    let file: String
    var i = 0
    var line = 1

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    private struct OpenPoint {
        var line: Int
        var element: String
        var coordinate: Coordinate
        var time: Date?
    }

    /// The timed points, the number of points, and how many had no time.
    mutating func scan() throws(TraceLoadError) -> ([Trace.Point], Int, Int) {
        var points: [Trace.Point] = []
        var count = 0, untimed = 0
        var open: OpenPoint?
        var sawRoot = false
        func finish(_ point: OpenPoint) {
            count += 1
            if let time = point.time {
                points.append(Trace.Point(time: time, coordinate: point.coordinate))
            } else {
                untimed += 1
            }
        }
        while let tag = try nextTag() {
            switch (tag.kind, tag.localName) {
            case (.open, "gpx"):
                sawRoot = true
            case (.open, "trkpt"), (.open, "rtept"):
                if let unclosed = open {
                    throw error("<\(unclosed.element)> opened at line \(unclosed.line) is not closed before this <\(tag.localName)>", line: tag.line)
                }
                guard let lat = tag.attributes["lat"], let lon = tag.attributes["lon"] else {
                    throw error("<\(tag.localName)> without lat and lon attributes", line: tag.line)
                }
                let coordinate = try TraceLoader.coordinate(lat: lat, lon: lon, file: file, line: tag.line)
                let point = OpenPoint(line: tag.line, element: tag.localName, coordinate: coordinate)
                if tag.selfClosing { finish(point) } else { open = point }
            case (.close, "trkpt"), (.close, "rtept"):
                guard let point = open else { throw error("</\(tag.localName)> without a matching <\(tag.localName)>", line: tag.line) }
                finish(point)
                open = nil
            case (.open, "time") where open != nil && open?.time == nil && !tag.selfClosing:
                let text = readText()
                guard let time = ISO8601.parse(text) else {
                    throw error("bad <time> '\(text)' (expected ISO-8601 UTC, e.g. 2020-12-18T06:15:50Z)", line: tag.line)
                }
                open?.time = time
            default:
                break
            }
        }
        if let unclosed = open {
            throw error("<\(unclosed.element)> opened at line \(unclosed.line) is never closed (truncated file?)", line: line)
        }
        guard sawRoot else { throw TraceLoadError(file: file, reason: "not a GPX file (no <gpx> element)") }
        return (points, count, untimed)
    }

    private struct Tag {
        enum Kind { case open, close }
        var kind: Kind
        var localName: String
        var attributes: [String: String]
        var selfClosing: Bool
        var line: Int
    }

    private func error(_ reason: String, line: Int) -> TraceLoadError {
        TraceLoadError(file: file, line: line, reason: reason)
    }

    private mutating func advance() {
        if bytes[i] == UInt8(ascii: "\n") { line += 1 }
        i += 1
    }

    private func at(_ text: String) -> Bool {
        let pattern = Array(text.utf8)
        return i + pattern.count <= bytes.count && bytes[i..<(i + pattern.count)].elementsEqual(pattern)
    }

    /// Skips to just past `terminator`; false at the end of the input.
    private mutating func skip(past terminator: String) -> Bool {
        let first = terminator.utf8.first
        while i < bytes.count {
            if bytes[i] == first, at(terminator) {
                for _ in 0..<terminator.utf8.count { advance() }
                return true
            }
            advance()
        }
        return false
    }

    /// The text up to the next `<`, trimmed.
    private mutating func readText() -> String {
        let start = i
        while i < bytes.count, bytes[i] != UInt8(ascii: "<") { advance() }
        return String(decoding: bytes[start..<i], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The next element tag (open or close); nil at the end of the input.
    private mutating func nextTag() throws(TraceLoadError) -> Tag? {
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else {
                advance()
                continue
            }
            let tagLine = line
            if at("<!--") {
                guard skip(past: "-->") else { throw error("comment never closed", line: tagLine) }
                continue
            }
            if at("<![CDATA[") {
                guard skip(past: "]]>") else { throw error("CDATA section never closed", line: tagLine) }
                continue
            }
            if at("<?") || at("<!") {
                guard skip(past: ">") else { throw error("declaration never closed", line: tagLine) }
                continue
            }
            advance()  // <
            var kind = Tag.Kind.open
            if i < bytes.count, bytes[i] == UInt8(ascii: "/") {
                kind = .close
                advance()
            }
            let nameStart = i
            while i < bytes.count, !TraceLoader.isSpace(bytes[i]), bytes[i] != UInt8(ascii: ">"), bytes[i] != UInt8(ascii: "/") {
                advance()
            }
            let qualified = String(decoding: bytes[nameStart..<i], as: UTF8.self)
            let localName = qualified.split(separator: ":").last.map(String.init) ?? qualified
            var attributes: [String: String] = [:]
            var selfClosing = false
            while true {
                while i < bytes.count, TraceLoader.isSpace(bytes[i]) { advance() }
                guard i < bytes.count else { throw error("<\(qualified)> tag never closed (truncated file?)", line: tagLine) }
                if bytes[i] == UInt8(ascii: ">") {
                    advance()
                    break
                }
                if bytes[i] == UInt8(ascii: "/") {
                    selfClosing = true
                    advance()
                    continue
                }
                let attributeStart = i
                while i < bytes.count, bytes[i] != UInt8(ascii: "="), bytes[i] != UInt8(ascii: ">"), !TraceLoader.isSpace(bytes[i]) {
                    advance()
                }
                let attributeName = String(decoding: bytes[attributeStart..<i], as: UTF8.self)
                while i < bytes.count, TraceLoader.isSpace(bytes[i]) { advance() }
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else {
                    throw error("attribute '\(attributeName)' of <\(qualified)> has no value", line: line)
                }
                advance()
                while i < bytes.count, TraceLoader.isSpace(bytes[i]) { advance() }
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                    throw error("attribute '\(attributeName)' of <\(qualified)> is not quoted", line: line)
                }
                let quote = bytes[i]
                advance()
                let valueStart = i
                while i < bytes.count, bytes[i] != quote { advance() }
                guard i < bytes.count else { throw error("<\(qualified)> tag never closed (truncated file?)", line: tagLine) }
                let value = String(decoding: bytes[valueStart..<i], as: UTF8.self)
                advance()
                let localAttribute = attributeName.split(separator: ":").last.map(String.init) ?? attributeName
                attributes[localAttribute] = value.trimmingCharacters(in: .whitespaces)
            }
            return Tag(kind: kind, localName: localName, attributes: attributes, selfClosing: selfClosing, line: tagLine)
        }
        return nil
    }
}
