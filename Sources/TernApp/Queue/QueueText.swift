import Foundation
import TernCore
import TernStore

/// The queue's lines of `tern status` and `tern queue stats`.
public enum QueueText {
    public static func lines(_ stats: QueueStats, path: String) -> [String] {
        var lines = [
            "queue          \(path)",
            "waiting        \(stats.depth) positions",
            "oldest waiting \(stats.oldestTime.map(WireTime.format) ?? "-")",
            "last sequence  \(stats.lastSequence.map(String.init) ?? "-")",
        ]
        let dropped = stats.dropped
        if dropped.total > 0 {
            let parts = [
                ("oldest dropped", dropped.oldest), ("thinned", dropped.thinned), ("new refused", dropped.rejectedNew),
                ("expired", dropped.expired),
            ].filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
            lines.append("DROPPED        \(dropped.total) positions by the capacity rules (\(parts.joined(separator: ", "))): queue full, see [store]")
        }
        if stats.quarantined > 0 {
            lines.append("QUARANTINED    \(stats.quarantined) undecodable rows (\(stats.inQuarantine) kept): tern queue export --quarantine")
        }
        return lines
    }
}
