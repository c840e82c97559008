import Foundation
import TernCore
import TernStore

/// Queued positions as text for `tern queue export`: CSV, GPX 1.1, GeoJSON or JSON lines, written a
/// page at a time (`header`, `rows` for each page, `footer`).
public enum QueueExport {
    public enum Format: String, CaseIterable, Sendable {
        case csv, gpx, geojson, jsonl
    }

    public static func header(_ format: Format) -> String {
        switch format {
        case .csv: "seq,id,time,lat,lon,alt,speed,course,quality,satellites,hdop,accuracy\n"
        case .gpx:
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="tern" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>tern queue</name><trkseg>

            """
        case .geojson: #"{"type":"FeatureCollection","features":["# + "\n"
        case .jsonl: ""
        }
    }

    /// The rows of one page; `first` tells GeoJSON whether a comma is due before the first feature.
    public static func rows(_ positions: [QueuedPosition], _ format: Format, first: Bool) -> String {
        var text = ""
        for (index, queued) in positions.enumerated() {
            let fix = queued.position.fix
            let time = WireTime.format(fix.time)
            let lat = number(fix.coordinate.latitude), lon = number(fix.coordinate.longitude)
            switch format {
            case .csv:
                text += [
                    "\(queued.sequence)", queued.position.id.uuidString, time, lat, lon, optional(fix.altitude), optional(fix.speed),
                    optional(fix.course), "\(fix.quality.rawValue)", fix.satellites.map(String.init) ?? "", optional(fix.hdop),
                    optional(fix.accuracy),
                ].joined(separator: ",") + "\n"
            case .gpx:
                text += #"<trkpt lat="\#(lat)" lon="\#(lon)">"#
                    + (fix.altitude.map { "<ele>\(number($0))</ele>" } ?? "") + "<time>\(time)</time>"
                    + (fix.hdop.map { "<hdop>\(number($0))</hdop>" } ?? "") + "</trkpt>\n"
            case .geojson:
                let comma = first && index == 0 ? "" : ","
                text += comma + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)\#(fix.altitude.map { "," + number($0) } ?? "")]},"#
                    + #""properties":{"seq":\#(queued.sequence),"id":"\#(queued.position.id.uuidString)","time":"\#(time)""#
                    + (fix.speed.map { #","speed":\#(number($0))"# } ?? "") + (fix.accuracy.map { #","accuracy":\#(number($0))"# } ?? "")
                    + "}}\n"
            case .jsonl:
                text += #"{"seq":\#(queued.sequence),"id":"\#(queued.position.id.uuidString)","time":"\#(time)","lat":\#(lat),"lon":\#(lon)"#
                    + (fix.altitude.map { #","alt":\#(number($0))"# } ?? "") + (fix.speed.map { #","speed":\#(number($0))"# } ?? "")
                    + (fix.course.map { #","course":\#(number($0))"# } ?? "") + #","quality":\#(fix.quality.rawValue)"#
                    + (fix.accuracy.map { #","accuracy":\#(number($0))"# } ?? "") + "}\n"
            }
        }
        return text
    }

    public static func footer(_ format: Format) -> String {
        switch format {
        case .gpx: "</trkseg></trk>\n</gpx>\n"
        case .geojson: "]}\n"
        case .csv, .jsonl: ""
        }
    }

    /// A quarantined row as one JSON line (its columns as the text they held, and why it was moved).
    public static func quarantined(_ row: QueueReader.QuarantinedRow) -> String {
        var object: [String: String] = row.columns
        object["seq"] = "\(row.sequence)"
        object["reason"] = row.reason
        object["quarantined_at"] = WireTime.format(row.quarantinedAt)
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func number(_ value: Double) -> String { "\(value)" }
    private static func optional(_ value: Double?) -> String { value.map(number) ?? "" }
}
