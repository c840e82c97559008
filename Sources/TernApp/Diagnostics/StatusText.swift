import Foundation
import TernCore

/// `tern status`'s lines for a daemon report: what the receiver and the scheduler are doing, in
/// words an operator on SSH can act on.
public enum StatusText {
    /// A report older than this means the daemon is not running (it writes every few seconds).
    public static let staleAfter: TimeInterval = 30

    public static func lines(_ report: StatusReport, now: Date) -> [String] {
        let g = report.gateway
        let age = max(0, now.timeIntervalSince(report.updated))
        var lines: [String] = []
        if age > staleAfter {
            lines.append(row("daemon", "NOT RUNNING? its last report is \(duration(age)) old (pid \(report.pid)); check `systemctl status tern` and `journalctl -u tern`"))
        } else {
            lines.append(row("daemon", "running (pid \(report.pid)), up \(duration(g.uptimeSeconds)); report \(duration(age)) old"))
        }
        lines.append(row("receiver", receiver(report)))
        if let s = g.scheduler {
            lines.append(row("scheduler", scheduler(s)))
            lines.append(row("ephemeris", ephemeris(s)))
        }
        if let fix = g.lastAccepted {
            let accuracy = fix.accuracy.map { String(format: " ±%.0f m", $0) } ?? ""
            lines.append(row("last fix", String(
                format: "%@ %.5f, %.5f%@ (%@ ago)", WireTime.format(fix.time), fix.coordinate.latitude,
                fix.coordinate.longitude, accuracy, duration(max(0, now.timeIntervalSince(fix.time))))))
        } else {
            lines.append(row("last fix", "none yet"))
        }
        let rejected = g.rejections.values.reduce(0, +)
        let reasons = g.rejections.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let thinned = g.thinned.values.reduce(0, +)
        let thinReasons = g.thinned.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var fixes = "\(g.fixesSeen) seen, \(g.fixesAccepted) accepted, \(rejected) rejected\(reasons.isEmpty ? "" : " (\(reasons))")"
        if thinned > 0 { fixes += ", \(thinned) thinned (\(thinReasons))" }
        if g.reanchors > 0 { fixes += ", re-anchored \(g.reanchors)×" }
        lines.append(row("fixes", fixes))
        let u = report.uplink
        // The state's name only: its details (the reason again, a time on the daemon's clock) are noise here.
        let state = u.state.prefix { $0 != "(" }
        var uplink = "\(state); \(u.uploaded) uploaded, \(report.queueDepth.map(String.init) ?? "?") waiting"
        if let blocked = u.blockedReason { uplink += "; BLOCKED: \(blocked)" }
        if let error = u.lastError, error != u.blockedReason { uplink += "; last error: \(error)" }
        lines.append(row("uplink", uplink))
        var store = "\(g.enqueued) stored"
        if g.pendingWrites > 0 { store += ", \(g.pendingWrites) waiting to be written" }
        if g.queueDrops.total > 0 { store += "; \(g.queueDrops.total) dropped by the queue's capacity rules (store.overflow)" }
        if g.droppedUnwritten > 0 { store += "; \(g.droppedUnwritten) LOST: the store failed for long" }
        lines.append(row("store", store))
        if let error = g.lastError { lines.append(row("last error", error)) }
        return lines
    }

    private static func receiver(_ report: StatusReport) -> String {
        let g = report.gateway
        if report.alwaysPowered {
            return "always powered (power.method = \"none\": no way to switch it; \(report.receiverLink))"
        }
        let share = g.uptimeSeconds > 0 ? 100 * g.receiverOnSeconds / g.uptimeSeconds : 0
        return "\(g.receiverPowered ? "on" : "off") (\(report.receiverLink)); powered "
            + String(format: "%.2f %%", share) + " of the time (\(duration(g.receiverOnSeconds))), "
            + "\(g.powerCycles) power-ons, \(g.acquisitionTimeouts) gave up without sky"
    }

    private static func scheduler(_ s: FixScheduler.Summary) -> String {
        var parts = ["\(s.policy), \(s.phase)"]
        switch s.motion {
        case "still": parts.append("still for \(duration(s.stillSeconds ?? 0))")
        case "moving": parts.append("moving")
        default: parts.append("no fix yet")
        }
        if s.consecutiveTimeouts > 0 { parts.append("no sky for the last \(s.consecutiveTimeouts) attempts") }
        if let next = s.nextPowerOnSeconds { parts.append("next power-on in \(duration(next))") }
        if let interval = s.intervalSeconds { parts.append("interval now \(duration(interval))") }
        return parts.joined(separator: "; ")
    }

    private static func ephemeris(_ s: FixScheduler.Summary) -> String {
        var parts = [s.ephemerisAgeSeconds.map { "\(duration($0)) old" } ?? "age unknown (no decode seen yet)"]
        parts.append("\(s.ephemerisRefreshes) refreshes, kept on \(s.keptOn) times")
        if let off = s.offBudgetSeconds, let allowed = s.offBudgetAllowedSeconds {
            parts.append("track off-budget ≈ \(duration(off)) of \(duration(allowed)) allowed")
        }
        return parts.joined(separator: "; ")
    }

    private static func row(_ label: String, _ text: String) -> String {
        label.padding(toLength: 15, withPad: " ", startingAt: 0) + text
    }

    /// "41 s", "7 min 12 s", "3 h 02 min", "2 d 04 h".
    public static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        switch s {
        case ..<60: return "\(s) s"
        case ..<3600: return "\(s / 60) min \(s % 60) s"
        case ..<86_400: return String(format: "%d h %02d min", s / 3600, s % 3600 / 60)
        default: return String(format: "%d d %02d h", s / 86_400, s % 86_400 / 3600)
        }
    }
}
