import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernStore

extension Tern {
    struct Queue: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Inspect the store-and-forward queue, read-only (safe while tern run writes it).",
            subcommands: [Stats.self, Peek.self, Export.self])

        struct Location: ParsableArguments {
            @Option(help: "Path of the TOML config; the queue is found from its data_dir.")
            var config: String = TernConfig.defaultPath

            @Option(help: "Data directory (overrides the config's data_dir).")
            var dataDir: String?

            /// Opens the queue read-only: never migrates or writes.
            func reader() throws -> QueueReader {
                let directory: String
                if let dataDir {
                    directory = dataDir
                } else {
                    do { directory = try TernConfig.load(path: config).dataDirectory } catch {
                        throw ValidationError("\(config): \(error); or pass --data-dir")
                    }
                }
                do { return try QueueReader(path: (directory as NSString).appendingPathComponent("queue.sqlite")) } catch {
                    throw ValidationError("\(error)")
                }
            }
        }

        struct Stats: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Depth, oldest position, drops and quarantine.")
            @OptionGroup var location: Location
            @Flag(help: "Print JSON.") var json = false

            func run() throws {
                let reader = try location.reader()
                let stats = try reader.stats()
                if json {
                    let encoder = JSONOutput.encoder(pretty: false, dates: .wire)
                    print(String(decoding: try encoder.encode(stats), as: UTF8.self))
                } else {
                    QueueText.lines(stats, path: reader.path).forEach { print($0) }
                }
            }
        }

        struct Peek: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "The oldest queued positions, one JSON line each.")
            @OptionGroup var location: Location
            @Option(help: "How many.") var count = 10

            func run() throws {
                print(QueueExport.rows(try location.reader().positions(limit: count), .jsonl, first: true), terminator: "")
            }
        }

        struct Export: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Every queued position (or the quarantined rows) as CSV, GPX, GeoJSON or JSON lines, to stdout.")
            @OptionGroup var location: Location
            @Option(help: "csv, gpx, geojson or jsonl.") var format: String = "jsonl"
            @Option(help: "Only positions measured at or after this time (ISO 8601, e.g. 2026-11-25T08:00:00Z).") var since: String?
            @Flag(help: "Export the quarantined rows instead (JSON lines: their columns as text and the reason).") var quarantine = false

            func validate() throws {
                guard QueueExport.Format(rawValue: format) != nil else {
                    throw ValidationError("--format must be one of csv, gpx, geojson, jsonl, got '\(format)'")
                }
                if let since, WireTime.parse(since) == nil {
                    throw ValidationError("--since must be an ISO 8601 time such as 2026-11-25T08:00:00Z, got '\(since)'")
                }
            }

            func run() throws {
                let reader = try location.reader()
                let output = FileHandle.standardOutput
                if quarantine {
                    var after: Int64 = 0
                    while case let rows = try reader.quarantine(after: after, limit: 1000), let last = rows.last {
                        output.write(Data(rows.map(QueueExport.quarantined).joined().utf8))
                        after = last.sequence
                    }
                    return
                }
                let format = QueueExport.Format(rawValue: format) ?? .jsonl
                let start = since.flatMap(WireTime.parse)
                output.write(Data(QueueExport.header(format).utf8))
                var after: Int64 = 0
                var first = true
                // Short read transactions, a page at a time: the daemon's checkpoints are never held up.
                while case let page = try reader.positions(since: start, after: after, limit: 1000), let last = page.last {
                    output.write(Data(QueueExport.rows(page, format, first: first).utf8))
                    first = false
                    after = last.sequence
                }
                output.write(Data(QueueExport.footer(format).utf8))
            }
        }
    }
}
