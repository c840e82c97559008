import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernNMEA

extension Tern {
    /// `tern replay LOG [--fixes-out CSV] [--no-thinning] [--json]`.
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a recorded NMEA log through the decoder and the gateway's decisions; count what each rule did.",
            discussion: """
                Decodes LOG as `tern nmea decode` does and passes every epoch to the daemon's decision \
                core (GatewayCore: freshness, the filter with the default [filter] settings, thinning, \
                the writes) with the always-on policy, as on a receiver that is never switched off. \
                Prints the fixes accepted, rejected by reason and thinned by reason (--no-thinning: \
                every accepted fix is stored). A log has no clocks of its own: the core's clock follows \
                the fixes' times and no system clock is synchronised (sequence checks and re-anchoring \
                still apply). Fixes more than 10 s apart with no epoch between them are a new recording, \
                replayed as tern started afresh (warm-up from its first fix). --fixes-out writes the \
                stored fixes as time,lat,lon,accuracy_m (as `tern simulate` does).
                """)

        @Argument(help: "NMEA log file ('#' lines are comments; '# Date: YYYY-MM-DD' sets the reference date).")
        var log: String

        @Option(help: "Write the stored fixes to this CSV file (time,lat,lon,accuracy_m).")
        var fixesOut: String?

        @Flag(help: "Store every fix the rules accept (no thinning).")
        var noThinning = false

        @Flag(help: "Print the report as JSON.")
        var json = false

        func run() throws {
            guard let data = FileManager.default.contents(atPath: log) else {
                throw ValidationError("cannot read \(log): no such file, or not readable")
            }
            let replay = LogReplay(filter: LogReplay.defaultFilter(thinning: !noThinning))
            let (report, stored) = replay.run(Array(data), name: (log as NSString).lastPathComponent)
            if let fixesOut {
                var text = "time,lat,lon,accuracy_m\n"
                for fix in stored {
                    let accuracy = fix.accuracy.map { SimulationOutput.number($0, 2) } ?? ""
                    text += "\(SimulationOutput.timestamp(fix.time)),\(SimulationOutput.number(fix.coordinate.latitude, 7)),"
                        + "\(SimulationOutput.number(fix.coordinate.longitude, 7)),\(accuracy)\n"
                }
                do { try SimulationOutput.write(text, to: fixesOut) } catch { throw ValidationError(error.description) }
            }
            if json {
                let encoder = JSONOutput.encoder()
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
                return
            }
            func list(_ counts: [String: Int]) -> String {
                counts.isEmpty ? "" : " (" + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
            }
            print("""
                \(report.file): \(report.usableFixes) usable fixes (\(report.noFixEpochs) epochs without a fix), \(report.sessions) session(s)
                  accepted  \(report.accepted)
                  rejected  \(report.rejectedTotal)\(list(report.rejected)) = \(SimulationOutput.number(report.rejectedShare * 100, 1)) %
                  thinned   \(report.thinnedTotal)\(list(report.thinned))
                  stored    \(report.stored)\(report.reanchors > 0 ? "\n  re-anchored \(report.reanchors)×" : "")
                """)
        }
    }
}
