import Logging
import ServiceLifecycle
import Synchronization
import TernCore
import TernSimulation

/// The demo's script: takes the collector offline, brings it back (announcing that the network
/// may be back), and ends the demo when the simulated duration is over.
final class NetworkScript: Service, Sendable {
    private let options: DemoOptions
    private let collector: Collector
    private let network: ManualConnectivity
    private let clock: ScaledClock
    private let logger: Logger
    private let offline = Mutex<(from: Double?, to: Double?)>((nil, nil))

    init(options: DemoOptions, collector: Collector, network: ManualConnectivity, clock: ScaledClock, logger: Logger) {
        self.options = options
        self.collector = collector
        self.network = network
        self.clock = clock
        self.logger = logger
    }

    /// How long the collector was offline (simulated seconds).
    var offlineSeconds: Double {
        offline.withLock { o in
            guard let from = o.from else { return 0 }
            return (o.to ?? clock.now.offset.seconds) - from
        }
    }

    func run() async throws {
        do {
            try await script()
        } catch is CancellationError {
            return  // Ctrl-C or SIGTERM: the demo ends early.
        }
    }

    private func script() async throws {
        let start = clock.now
        try await cancelWhenGracefulShutdown {
            try await self.clock.sleep(until: start.advanced(by: self.options.duration * self.options.offlineFrom), tolerance: nil)
            try await self.collector.goOffline()
            self.offline.withLock { $0.from = self.clock.now.offset.seconds }
            self.network.announce(.offline)
            self.logger.notice("collector offline")
            try await self.clock.sleep(until: start.advanced(by: self.options.duration * self.options.offlineUntil), tolerance: nil)
            try await self.collector.goOnline()
            self.offline.withLock { $0.to = self.clock.now.offset.seconds }
            self.network.announce(.mayBeOnline)
            self.logger.notice("collector back online")
            try await self.clock.sleep(until: start.advanced(by: self.options.duration), tolerance: nil)
        }
    }
}
