import ArgumentParser
import Foundation
import Logging
import TernCore
import TernUplink

extension Tern {
    struct Connectivity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Watch what the uplink's connectivity monitor sees (rtnetlink link and route changes): one line per event.",
            discussion: """
                `may be online` is a hint to retry uploads at once (a link came up, a default route appeared); \
                `offline` means no usable default route is left. Ctrl-C stops.
                """)

        @Option(help: "Stop after this many events (0: never).")
        var count = 0

        func run() async throws {
            let logger = Logger(label: "tern.connectivity")
            var seen = 0
            for await event in NetlinkConnectivity(logger: logger).events() {
                let text = event == .offline ? "offline" : "may be online"
                FileHandle.standardOutput.write(Data("\(WireTime.format(Date())) \(text)\n".utf8))
                seen += 1
                if count > 0, seen >= count { break }
            }
        }
    }
}
