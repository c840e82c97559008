import Foundation
import Logging
import ServiceLifecycle
import TernCore
import TernGateway
import TernHardware
import TernMetrics

extension Pipeline {
    /// What the metrics show at `now`: the gateway's and forwarder's counters, the queue (its cached
    /// depth and the position waiting longest: both cheap on a queue of a million rows), the receiver link.
    public func metricsSample(started: Date, problems: [String] = [], now: Date = Date()) async -> MetricsSample {
        let stats = receiver.stats
        return MetricsSample(
            serviceProblems: problems.count,
            now: now, started: started, gateway: await gateway.status(), uplink: forwarder.status(),
            queueDepth: try? await queue.count(), queueOldest: (try? await queue.oldest(limit: 1))?.first?.position.fix.time,
            receiverLink: receiver.linkState.name,
            nmea: .init(bytes: stats.bytes, sentences: stats.sentences, checksumErrors: stats.checksumErrors))
    }
}

/// The daemon's metrics services (`[metrics]`): the textfile rewritten every `interval`, and the
/// `GET /metrics` port. Neither ever stops tracking: a textfile that cannot be written is logged once
/// (and when it works again); a port that cannot be bound (taken by another program, its address not
/// assigned yet at boot) is retried with backoff, up to every `MetricsPublisher.bindRetry.maximum`,
/// and reported in `problems` until it binds.
struct MetricsPublisher<C: Clock>: Sendable where C.Duration == Duration {
    let config: TernConfig
    let pipeline: Pipeline<C>
    let started: Date
    let problems: ServiceProblems
    let logger: Logger
    /// Waits between attempts to bind `metrics.listen`.
    static var bindRetry: Backoff { Backoff(base: .seconds(1), maximum: .seconds(60), jitter: 0) }

    func services() async throws -> [any Service] {
        let metrics = StatusMetrics(device: config.device, version: BuildInfo.version)
        let refresh: @Sendable () async -> String = { [pipeline, started, problems] in
            metrics.record(await pipeline.metricsSample(started: started, problems: problems.current))
            return metrics.text()
        }
        var services: [any Service] = []
        if let directory = config.metrics.textfileDirectory {
            services.append(textfile(TextfileExporter(directory: directory), refresh: refresh))
        }
        if let listen = config.metrics.listen {
            services.append(TaskService("metrics-http") { [problems, logger] in
                try await cancelWhenGracefulShutdown {
                    try await Self.serve(listen, render: refresh, problems: problems, logger: logger)
                }
            })
        }
        return services
    }

    /// Binds `listen` (retrying while it cannot) and serves scrapes until cancelled.
    static func serve(
        _ listen: TernConfig.HostPort, render: @escaping @Sendable () async -> String, problems: ServiceProblems, logger: Logger
    ) async throws {
        let shown = listen.host.contains(":") ? "[\(listen.host)]:\(listen.port)" : "\(listen.host):\(listen.port)"
        var attempt = 0
        while true {
            let server = MetricsHTTPServer(host: listen.host, port: listen.port, logger: logger, render: render)
            do {
                try await server.start()
            } catch {
                attempt += 1
                let wait = bindRetry.delay(attempt: attempt, unitRandom: 0.5)
                let problem = "metrics.listen \(shown): \(error); retried every \(bindRetry.maximum.components.seconds) s at most (free the port, or choose another)"
                if attempt == 1 { logger.warning("\(problem)") }
                problems.set("metrics.listen", problem)
                try await Task.sleep(for: wait)
                continue
            }
            problems.set("metrics.listen", nil)
            logger.notice("metrics on http://\(shown)/metrics", metadata: attempt > 0 ? ["after_attempts": "\(attempt + 1)"] : [:])
            try await server.run()
            return
        }
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
