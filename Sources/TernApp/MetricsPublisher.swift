import Foundation
import Logging
import ServiceLifecycle
import TernGateway
import TernHardware
import TernMetrics

extension Pipeline {
    /// What the metrics show at `now`: the gateway's and forwarder's counters, the queue (its cached
    /// depth and the position waiting longest: both cheap on a queue of a million rows), the receiver link.
    public func metricsSample(started: Date, now: Date = Date()) async -> MetricsSample {
        let stats = receiver.stats
        return MetricsSample(
            now: now, started: started, gateway: await gateway.status(), uplink: forwarder.status(),
            queueDepth: try? await queue.count(), queueOldest: (try? await queue.oldest(limit: 1))?.first?.position.fix.time,
            receiverLink: receiver.linkState.name,
            nmea: .init(bytes: stats.bytes, sentences: stats.sentences, checksumErrors: stats.checksumErrors))
    }
}

/// The daemon's metrics services (`[metrics]`): the textfile rewritten every `interval`, and the
/// `GET /metrics` port. A textfile that cannot be written is logged once (and when it works again);
/// it never stops tracking.
struct MetricsPublisher<C: Clock>: Sendable where C.Duration == Duration {
    let config: TernConfig
    let pipeline: Pipeline<C>
    let started: Date
    let logger: Logger

    func services() async throws -> [any Service] {
        let metrics = StatusMetrics(device: config.device, version: BuildInfo.version)
        let refresh: @Sendable () async -> String = { [pipeline, started] in
            metrics.record(await pipeline.metricsSample(started: started))
            return metrics.text()
        }
        var services: [any Service] = []
        if let directory = config.metrics.textfileDirectory {
            services.append(textfile(TextfileExporter(directory: directory), refresh: refresh))
        }
        if let listen = config.metrics.listen {
            let server = MetricsHTTPServer(host: listen.host, port: listen.port, logger: logger, render: refresh)
            do {
                try await server.start()
            } catch {
                throw ConfigError(key: "metrics.listen", "\(error)")
            }
            logger.notice("metrics on http://\(listen.host.contains(":") ? "[\(listen.host)]" : listen.host):\(listen.port)/metrics")
            services.append(TaskService("metrics-http") { try await cancelWhenGracefulShutdown { try await server.run() } })
        }
        return services
    }

    private func textfile(_ exporter: TextfileExporter, refresh: @escaping @Sendable () async -> String) -> any Service {
        TaskService("metrics-textfile") { [config, logger] in
            try await cancelWhenGracefulShutdown {
                var failing = false
                while !Task.isCancelled {
                    do {
                        try exporter.write(await refresh())
                        if failing { logger.notice("metrics textfile written again", metadata: ["path": "\(exporter.path)"]) }
                        failing = false
                    } catch {
                        if !failing { logger.warning("\(error)", metadata: ["path": "\(exporter.path)"]) }
                        failing = true
                    }
                    try await Task.sleep(for: config.metrics.interval)
                }
            }
        }
    }
}
