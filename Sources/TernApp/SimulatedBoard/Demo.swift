import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import TernCore
import TernGateway
import TernSimulation
import TernUplink

/// `tern demo`: the real pipeline on the built-in simulated board, with a local collector that
/// goes offline for a while and comes back. Ends with a final flush and a summary.
public struct Demo: Sendable {
    public let options: DemoOptions
    private let logger: Logger

    public init(options: DemoOptions, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// The configuration the demo runs: `options.configPath`, else `board/simulated.toml`, read by the
    /// daemon's own loader, with three things overridden: the data directory, the receiver's speed
    /// (and its seed when given), and the collector (the demo's own, started on 127.0.0.1).
    public func config(dataDirectory: String) throws(ConfigError) -> TernConfig {
        var config: TernConfig
        if let path = options.configPath {
            config = try TernConfig.load(path: path)
        } else {
            config = try TernConfig.parse(SimulatedBoardProfile.text)
        }
        guard case let .simulated(_, seed) = config.receiver, config.power == .simulated else {
            throw ConfigError(
                key: "receiver.kind",
                "tern demo runs the simulated board: the configuration must have receiver.kind = \"simulated\" and power.method = \"simulated\" (as board/simulated.toml)")
        }
        config.dataDirectory = dataDirectory
        config.receiver = .simulated(speed: options.speed, seed: options.seed ?? seed)
        config.uplink.url = nil
        config.uplink.localCollector = true
        return config
    }

    /// The simulated receiver's seed the run uses.
    private func seed(_ config: TernConfig) -> UInt64 {
        if case let .simulated(_, seed) = config.receiver { return seed }
        return 1
    }

    /// Runs the demo; `report` receives a status about once per real second.
    public func run(report: @escaping @Sendable (DemoStatus) -> Void) async throws -> DemoSummary {
        let dataDirectory = try options.dataDirectory ?? Self.makeTemporaryDirectory()
        let config = try config(dataDirectory: dataDirectory)
        let collector = Collector(logger: logger)
        try await collector.start()
        let network = ManualConnectivity()
        let assembly = try BoardAssembly(
            config: config, speed: options.speed, seed: seed(config), queue: try Pipeline<ScaledClock>.openQueue(config: config),
            uplinkURL: collector.url, connectivity: network, logger: logger)
        let board = assembly.board, audit = assembly.audit, queue = assembly.queue
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try UplinkHTTPSettings().clientConfiguration(for: collector.url, environment: [:]))
        let pipeline = try Pipeline(config: config, parts: assembly.parts, httpClient: httpClient, clock: board.clock, logger: logger)

        let script = NetworkScript(options: options, collector: collector, network: network, clock: board.clock, logger: logger)
        let reporter = TaskService("status") { [options] in
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(1))
                    report(await Self.status(pipeline: pipeline, collector: collector, options: options, clock: board.clock))
                }
            }
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] =
            ([board.service] + pipeline.services + [reporter]).map { .init(service: $0) }
        services.append(.init(service: script, successTerminationBehavior: .gracefullyShutdownGroup))
        let group = ServiceGroup(configuration: .init(
            services: services, gracefulShutdownSignals: [.sigint, .sigterm], logger: logger))

        var runError: (any Error)?
        do { try await group.run() } catch { runError = error }

        // Final flush: the collector is back; send whatever is still queued.
        try? await collector.goOnline()
        _ = await pipeline.forwarder.drain(timeout: .seconds(600))
        var summary = await summarize(pipeline: pipeline, queue: queue, collector: collector, script: script, dataDirectory: dataDirectory, clock: board.clock)
        summary.audit = audit.summary
        summary.rules = RulesInForce(config)
        report(await Self.status(pipeline: pipeline, collector: collector, options: options, clock: board.clock))
        try? await httpClient.shutdown()
        try? await collector.stop()
        await board.serialPort.close()
        if let runError { throw runError }
        return summary
    }

    private static func status(pipeline: Pipeline<ScaledClock>, collector: Collector, options: DemoOptions, clock: ScaledClock) async -> DemoStatus {
        let gateway = await pipeline.gateway.status()
        return DemoStatus(
            simulatedSeconds: min(clock.now.offset.seconds, options.duration.seconds),
            durationSeconds: options.duration.seconds, receiverOn: gateway.receiverPowered,
            fixesSeen: gateway.fixesSeen, fixesAccepted: gateway.fixesAccepted,
            queueDepth: (try? await pipeline.queue.count()) ?? -1,
            uploaded: pipeline.forwarder.status().uploaded, collectorOnline: await collector.snapshot().isOnline)
    }

    private func summarize(
        pipeline: Pipeline<ScaledClock>, queue: RecordingQueue, collector: Collector, script: NetworkScript,
        dataDirectory: String, clock: ScaledClock
    ) async -> DemoSummary {
        let gateway = await pipeline.gateway.status()
        let forwarder = pipeline.forwarder.status()
        let snapshot = await collector.snapshot()
        let enqueued = queue.enqueuedIDs
        let arrived = Set(snapshot.unique.map(\.id))
        let mine = snapshot.unique.filter { Set(enqueued).contains($0.id) }
        return DemoSummary(
            fixesSeen: gateway.fixesSeen, fixesAccepted: gateway.fixesAccepted, enqueued: enqueued.count,
            uploaded: forwarder.uploaded, receivedAtCollector: snapshot.positionsReceived,
            duplicatesAtCollector: snapshot.duplicates, lost: enqueued.filter { !arrived.contains($0) }.count,
            inOrder: mine.map(\.id) == enqueued && zip(snapshot.unique, snapshot.unique.dropFirst()).allSatisfy { $0.seq < $1.seq },
            queueDepthEnd: (try? await pipeline.queue.count()) ?? -1,
            receiverOnSeconds: (gateway.receiverOnSeconds * 10).rounded() / 10,
            powerCycles: gateway.powerCycles, uploadFailures: forwarder.failedAttempts,
            simulatedSeconds: (clock.now.offset.seconds * 10).rounded() / 10,
            collectorOfflineSeconds: (script.offlineSeconds * 10).rounded() / 10, dataDirectory: dataDirectory)
    }

    static func makeTemporaryDirectory() throws -> String {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("tern-demo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
