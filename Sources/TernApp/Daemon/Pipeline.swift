import AsyncHTTPClient
import Foundation
import Logging
import NIOPosix
import ServiceLifecycle
import TernCore
import TernGateway
import TernHardware
import TernStore
import TernUplink

/// The assembled pipeline: real adapters wired to the coordinator. `tern run` and `tern demo`
/// differ only in where the serial port, power switch, uplink URL and connectivity come from.
public struct Pipeline<C: Clock>: Sendable where C.Duration == Duration {
    public let gateway: Gateway<C>
    public let forwarder: Forwarder<C>
    public let queue: any PositionQueue
    public let receiver: NMEAReceiver
    /// How positions leave the board (`uplink.protocol`).
    public let uplink: any Uplink

    public struct Parts: Sendable {
        public var queue: any PositionQueue
        public var serialPort: any SerialPort
        public var powerSwitch: any PowerSwitch
        public var uplinkURL: URL
        public var connectivity: any Connectivity
        public var receiverOptions: NMEAReceiver.Options
        /// Where the scheduler's memory is kept across restarts (nil: start afresh each time).
        public var memory: (any SchedulerMemoryStore)?
        /// UTC now when the system clock is synchronised, else nil (`SystemClock.synchronisedTime` on a
        /// real board; nil on the simulated one, whose receiver lives on its own time).
        public var synchronisedTime: @Sendable () -> Date? = { nil }
        /// Told of every accepted fix the moment the filter accepts it (the simulated board's audit).
        public var accepted: @Sendable (Fix) -> Void = { _ in }
        /// Told of every fix the receiver reports (the control socket's tap).
        public var seen: @Sendable (Fix) -> Void = { _ in }
        /// Where trusted receiver times go instead of `[time] chrony_socket`'s `ChronySocket` (tests).
        public var timeSink: (any TimeSink)?

        public init(
            queue: any PositionQueue, serialPort: any SerialPort, powerSwitch: any PowerSwitch, uplinkURL: URL,
            connectivity: any Connectivity, receiverOptions: NMEAReceiver.Options = .init(),
            memory: (any SchedulerMemoryStore)? = nil
        ) {
            self.memory = memory
            self.queue = queue
            self.serialPort = serialPort
            self.powerSwitch = powerSwitch
            self.uplinkURL = uplinkURL
            self.connectivity = connectivity
            self.receiverOptions = receiverOptions
        }
    }

    /// Throws `ConfigError` for uplink settings that cannot work (a CA file without certificates, …).
    public init(config: TernConfig, parts: Parts, httpClient: HTTPClient, clock: C, logger: Logger) throws {
        queue = parts.queue
        receiver = NMEAReceiver(
            serialPort: parts.serialPort, powerSwitch: parts.powerSwitch,
            options: parts.receiverOptions, logger: logger.labelled("tern.receiver"), clock: clock)
        do {
            uplink = try Self.uplink(config: config, url: parts.uplinkURL, queueID: parts.queue.queueID, httpClient: httpClient, logger: logger.labelled("tern.uplink"))
        } catch {
            throw ConfigError(key: error.key, error.message)
        }
        forwarder = Forwarder(
            queue: queue, uplink: uplink, connectivity: parts.connectivity, backoff: config.uplink.backoff,
            batchSize: config.uplink.batchSize, maxRecordAttempts: config.uplink.maxRecordAttempts,
            liveFirst: config.uplink.liveFirst, seed: UInt64.random(in: 1...UInt64.max), clock: clock,
            logger: logger.labelled("tern.forwarder"))
        gateway = Gateway(
            configuration: config.core, receiver: receiver, queue: queue, forwarder: forwarder, clock: clock,
            memory: parts.memory, synchronisedTime: parts.synchronisedTime, accepted: parts.accepted, seen: parts.seen,
            timeSink: parts.timeSink ?? config.time.chronySocket.map { ChronySocket(path: $0, logger: logger.labelled("tern.time")) },
            logger: logger.labelled("tern.gateway"))
    }

    /// The uplink `uplink.protocol` names.
    static func uplink(config: TernConfig, url: URL, queueID: UUID, httpClient: HTTPClient, logger: Logger) throws(UplinkConfigError) -> any Uplink {
        let settings = config.uplink
        switch settings.protocol {
        case .tern:
            return HTTPUplink(url: url, device: config.device, queueID: queueID, httpClient: httpClient, timeout: settings.timeout, logger: logger, token: settings.token)
        case .traccar:
            return TraccarUplink(
                url: url, device: config.device, format: settings.traccarFormat, httpClient: httpClient, parallel: settings.parallel,
                timeout: settings.timeout, logger: logger)
        case .owntracksHTTP:
            return try OwnTracksHTTPUplink(
                url: url, device: config.device, username: settings.username, password: settings.password,
                trackerID: settings.trackerID, httpClient: httpClient, timeout: settings.timeout, logger: logger)
        case .mqtt:
            return try MQTTUplink(
                url: url, device: config.device, topic: settings.topic, username: settings.username, password: settings.password,
                caFile: settings.caFile, trackerID: settings.trackerID, timeout: settings.timeout,
                group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        }
    }

    /// Ends the uplink's own connection cleanly (MQTT: DISCONNECT, so the broker does not publish the
    /// last will as if the board had died).
    public func shutdownUplink() async {
        if let mqtt = uplink as? MQTTUplink { await mqtt.shutdown() }
    }

    /// The gateway and forwarder as services, in start order.
    public var services: [any Service] { [ForwarderService(forwarder), GatewayService(gateway)] }

    /// Creates the data directory when missing and opens the queue in it; a damaged queue is moved
    /// aside and what reads is salvaged into a new one (`SQLitePositionQueue.openRecovering`).
    public static func openQueue(config: TernConfig, logger: Logger = Logger(label: "tern.queue")) throws -> SQLitePositionQueue {
        do {
            try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ConfigError(
                key: "data_dir",
                "cannot create \(config.dataDirectory): \(error.localizedDescription); create it and give the tern user write access")
        }
        let options = SQLitePositionQueue.Options(capacity: config.store.capacity)
        return try SQLitePositionQueue.openRecovering(path: config.queuePath, options: options, logger: logger.labelled("tern.queue")).queue
    }
}

extension Logger {
    /// The same logger, with the component named in its metadata.
    func labelled(_ component: String) -> Logger {
        var logger = self
        logger[metadataKey: "component"] = "\(component)"
        return logger
    }
}
