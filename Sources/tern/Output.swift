import ArgumentParser
import Foundation
import TernCore
import TernApp

/// A status line that rewrites itself on a terminal and prints plain lines elsewhere (logs, pipes).
final class StatusLine: Sendable {
    private let isTerminal = isatty(STDERR_FILENO) == 1

    func show(_ text: String) {
        let out = isTerminal ? "\r\u{1B}[2K" + text : text + "\n"
        FileHandle.standardError.write(Data(out.utf8))
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

extension DemoSummary {
    func jsonString() throws -> String {
        let encoder = JSONOutput.encoder(pretty: false)
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    var text: String {
        """
        Summary
          fixes seen / accepted     \(fixesSeen) / \(fixesAccepted)
          enqueued / uploaded       \(enqueued) / \(uploaded)
          at the collector          \(receivedAtCollector) received, \(duplicatesAtCollector) duplicates, \(lost) lost, in order: \(inOrder ? "yes" : "NO")
          queue depth at the end    \(queueDepthEnd)
          receiver on               \(Int(receiverOnSeconds)) s of \(Int(simulatedSeconds)) s (\(powerCycles) power cycles)
          collector offline         \(Int(collectorOfflineSeconds)) s, \(uploadFailures) failed upload attempts
          fresh and true            \(audit.checked - audit.stale) of \(audit.checked) measured after their power-on, \(audit.checked - audit.untrue) as the receiver reported them (the farthest \(Int(audit.worstErrorM.rounded())) m from the route)
          faulty reports stored     \(audit.faultsPastTheFilter) the jump rule rejects, \(audit.faultsStored) no rule can tell (outliers after a long interval, stale repeats; the farthest \(Int(audit.worstFaultErrorM.rounded())) m)
          data directory            \(dataDirectory)
          policy                    \(rules?.policy ?? "-")
          filter                    \(rules?.filter ?? "-")
          store                     \(rules?.store ?? "-")
        \(isClean ? "OK: every accepted position arrived exactly once, in order, measured after its power-on and as the receiver reported it; no faulty report the filter can catch was stored." : "PROBLEM: see the figures above.")
        """
    }
}

enum DurationArgument {
    static func parse(_ text: String) throws -> Duration {
        guard let duration = DurationText.parse(text) else {
            throw ValidationError("expected a duration such as 90s, 15m or 2h, got '\(text)'")
        }
        return duration
    }
}
