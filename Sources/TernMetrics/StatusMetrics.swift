import Foundation
import Prometheus
import Synchronization
import TernGateway

/// The daemon's metrics: each `record(_:)` brings every series up to date with a sample, and `text()`
/// renders them in Prometheus' text format (for the node_exporter textfile and `/metrics`).
///
/// Counters follow the daemon's own cumulative counts (each record adds what grew since the last);
/// gauges take the sample's value. Series that need a first event (the last fix, the last upload)
/// appear once it happened, rather than as a misleading zero. docs/diagnostics.md, "Metrics", lists every series.
public final class StatusMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    /// The last cumulative value recorded per counter series.
    private let counted = Mutex<[String: Double]>([:])

    /// Every state `tern_receiver_link_state` reports (`ReceiverLinkState.name`).
    public static let linkStates = ["connecting", "connected", "gone", "silent", "wrong_baud", "autobauding"]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), device: String, version: String) {
        self.registry = registry
        registry.makeGauge(
            name: "tern_build_info", labels: [("version", version), ("device", device)],
            help: "Always 1; the labels name the tern version and the device").set(Double(1))
    }

    public func record(_ sample: MetricsSample) {
        let gateway = sample.gateway, uplink = sample.uplink
        gauge("tern_start_time_seconds", "When the daemon started, Unix time", sample.started.timeIntervalSince1970)
        gauge(
            "tern_service_problems", "Conditions the daemon retries around instead of exiting (e.g. metrics.listen cannot bind; see tern status)",
            Double(sample.serviceProblems))

        if let depth = sample.queueDepth { gauge("tern_queue_depth", "Positions waiting in the queue", Double(depth)) }
        if sample.queueDepth != nil {
            gauge(
                "tern_queue_oldest_age_seconds", "Age of the position waiting longest in the queue, by its fix time (0: queue empty)",
                sample.queueOldest.map { max(0, sample.now.timeIntervalSince($0)) } ?? 0)
        }
        count("tern_positions_enqueued_total", "Positions durably written to the queue", gateway.enqueued)
        count("tern_positions_uploaded_total", "Positions the server confirmed", uplink.uploaded)
        let dropped = "Positions given up, by reason (queue capacity rules, or the store failing for long)"
        count("tern_positions_dropped_total", dropped, gateway.queueDrops.oldest, labels: [("reason", "oldest")])
        count("tern_positions_dropped_total", dropped, gateway.queueDrops.thinned, labels: [("reason", "thinned")])
        count("tern_positions_dropped_total", dropped, gateway.queueDrops.rejectedNew, labels: [("reason", "rejected_new")])
        count("tern_positions_dropped_total", dropped, gateway.queueDrops.expired, labels: [("reason", "expired")])
        count("tern_positions_dropped_total", dropped, gateway.droppedUnwritten, labels: [("reason", "unwritten")])
        count("tern_positions_quarantined_total", "Positions the server refused too often, moved to the quarantine", uplink.quarantined)

        count("tern_upload_batches_total", "Batches (or single positions) the server confirmed", uplink.batchesSent)
        for failure in ForwarderStatus.FailureClass.allCases {
            count(
                "tern_upload_failures_total", "Upload attempts that failed, by class (retryable, rejected, permanent, queue)",
                uplink.failures[failure.rawValue] ?? 0, labels: [("class", failure.rawValue)])
        }
        gauge("tern_uplink_blocked", "1 while the server refuses our configuration (needs a human; see tern status)", uplink.blockedReason == nil ? 0 : 1)
        if let success = uplink.lastSuccessAt {
            gauge("tern_last_upload_success_timestamp_seconds", "When the server last confirmed positions, Unix time", success.timeIntervalSince1970)
        }

        count("tern_fixes_seen_total", "Fixes the receiver reported", gateway.fixesSeen)
        count("tern_fixes_accepted_total", "Fixes the filter accepted (stored, or thinned)", gateway.fixesAccepted)
        count("tern_fixes_unwanted_total", "Fixes that arrived while the scheduler wanted none (a receiver it cannot switch off keeps talking)", gateway.fixesUnwanted)
        count("tern_fixes_stale_total", "Fixes left over from an earlier power cycle, kept from the scheduler", gateway.staleFixes)
        for (reason, value) in gateway.rejections {
            count("tern_fixes_rejected_total", "Fixes the filter rejected, by reason", value, labels: [("reason", Self.snakeCase(reason))])
        }
        for (reason, value) in gateway.thinned {
            count("tern_fixes_thinned_total", "Accepted fixes thinning did not store, by reason", value, labels: [("reason", Self.snakeCase(reason))])
        }
        if let fix = gateway.lastAccepted {
            gauge("tern_last_fix_timestamp_seconds", "Time of the last accepted fix, Unix time", fix.time.timeIntervalSince1970)
            gauge("tern_fix_age_seconds", "Age of the last accepted fix", max(0, sample.now.timeIntervalSince(fix.time)))
        }

        gauge("tern_receiver_powered", "1 while the receiver is switched on", gateway.receiverPowered ? 1 : 0)
        count("tern_receiver_on_seconds_total", "Time the receiver was powered", gateway.receiverOnSeconds)
        count("tern_receiver_power_cycles_total", "Times the receiver was switched on", gateway.powerCycles)
        count("tern_receiver_acquisition_timeouts_total", "Power-ons given up without a fix", gateway.acquisitionTimeouts)
        for state in Self.linkStates {
            gauge(
                "tern_receiver_link_state", "1 for the receiver link's current state, 0 for the others", sample.receiverLink == state ? 1 : 0,
                labels: [("state", state)])
        }
        count("tern_nmea_bytes_total", "Bytes read from the receiver", sample.nmea.bytes)
        count("tern_nmea_sentences_total", "Checksum-valid NMEA sentences", sample.nmea.sentences)
        count("tern_nmea_checksum_errors_total", "NMEA sentences with a bad checksum (noise on the line, wrong baud)", sample.nmea.checksumErrors)
    }

    /// The metrics in Prometheus' text exposition format.
    public func text() -> String { registry.emitToString() }

    private func gauge(_ name: String, _ help: String, _ value: Double, labels: [(String, String)] = []) {
        registry.makeGauge(name: name, labels: labels, help: help).set(value)
    }

    private func count(_ name: String, _ help: String, _ value: Int, labels: [(String, String)] = []) {
        update(name, help, Double(value), labels: labels) { counter, delta in counter.increment(by: Int64(delta)) }
    }

    private func count(_ name: String, _ help: String, _ value: Double, labels: [(String, String)] = []) {
        update(name, help, value, labels: labels) { counter, delta in counter.increment(by: delta) }
    }

    /// Brings a counter to `value`: adds what grew; a count that went down (never, within one process)
    /// starts the series over rather than going backwards.
    private func update(
        _ name: String, _ help: String, _ value: Double, labels: [(String, String)], add: (Counter, Double) -> Void
    ) {
        let counter = registry.makeCounter(name: name, labels: labels, help: help)
        let key = ([name] + labels.map { "\($0.0)=\($0.1)" }).joined(separator: ",")
        let last = counted.withLock { counted in
            defer { counted[key] = value }
            return counted[key] ?? 0
        }
        if value < last {
            counter.reset()
            add(counter, value)
        } else if value > last {
            add(counter, value - last)
        }
    }

    /// `poorAccuracy` → `poor_accuracy`: Prometheus label values in the usual case.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase, !out.isEmpty { out.append("_") }
            out.append(contentsOf: character.lowercased())
        }
        return out
    }
}
