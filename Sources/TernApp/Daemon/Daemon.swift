import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import TernCore
import TernGateway
import TernHardware
import TernSimulation
import TernStore
import TernUplink

/// `tern run`: the pipeline from a config, as a long-running service. SIGTERM/SIGINT finish the
/// current write, power the receiver off and exit; systemd is told READY/STOPPING and watchdog pings.
public struct Daemon: Sendable {
    public let config: TernConfig
    private let logger: Logger
    private let notifier: SystemdNotifier
    /// What the daemon retries around meanwhile (`tern status` shows it).
    private let problems = ServiceProblems()

    public init(config: TernConfig, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) {
        self.config = config
        self.logger = logger
        self.notifier = notifier
    }

    public func run() async throws {
        let queue = try Pipeline<ContinuousClock>.openQueue(config: config, logger: logger)
        let clientConfiguration: HTTPClient.Configuration
        do {
            clientConfiguration = try config.uplink.httpSettings.clientConfiguration(for: config.uplink.url)
        } catch {
            throw ConfigError(key: "uplink.ca_file", "\(error)")
        }
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        do {
            try await run(queue: queue, httpClient: httpClient)
        } catch {
            try? await httpClient.shutdown()
            throw error
        }
        try? await httpClient.shutdown()
    }

    private func run(queue: SQLitePositionQueue, httpClient: HTTPClient) async throws {
        switch config.receiver {
        case let .serial(device, baud):
            // Open once plainly: a missing device or a permission problem is waited for at start, with
            // the fix named; from then on the port reconnects by itself.
            let wait = HardwareWait(config: config, notifier: notifier, logger: logger)
            guard try await wait.open("the receiver's UART \(device)", { try await TermiosSerialPort.open(path: device, baudRate: baud).close() }) != nil
            else { return }
            warnIfShared(device)
            let serialPort = ReconnectingSerialPort(path: device, baudRate: baud, logger: logger.labelled("tern.serial"))
            guard let powerSwitch = try await wait.open(config.power.waitedName, { [self] in try makePowerSwitch(serialPort: serialPort) })
            else { return }
            let chipset = ChipsetWatch(configured: config.receiverOptions.chipset, logger: logger.labelled("tern.receiver"))
            let tap = ControlTap()
            var options = receiverOptions(chipset: chipset)
            options.onBytes = { tap.bytes($0) }
            var parts = Pipeline<ContinuousClock>.Parts(
                queue: queue, serialPort: serialPort, powerSwitch: powerSwitch,
                uplinkURL: try uplinkURL(collector: nil), connectivity: NetlinkConnectivity(logger: logger.labelled("tern.connectivity")),
                receiverOptions: options, memory: queue)
            parts.synchronisedTime = SystemClock.synchronisedTime
            parts.seen = { tap.fix($0) }
            let pipeline = try Pipeline(config: config, parts: parts, httpClient: httpClient, clock: ContinuousClock(), logger: logger)
            try await run(pipeline, extra: [maintenance(queue, clock: ContinuousClock()), QueueDamageWatch(queue: queue), control(pipeline, tap: tap, port: serialPort)])
        case let .simulated(speed, seed):
            var collector: Collector?
            if config.uplink.localCollector {
                let local = Collector(logger: logger)
                try await local.start()
                logger.notice("local collector listening", metadata: ["url": "\(local.url)"])
                collector = local
            }
            // Every stored position is checked against the board's truth (freshness, position).
            var assembly = try BoardAssembly(
                config: config, speed: speed, seed: seed, queue: queue, uplinkURL: try uplinkURL(collector: collector),
                connectivity: NetlinkConnectivity(logger: logger.labelled("tern.connectivity")), logger: logger.labelled("tern.board"))
            let board = assembly.board, audit = assembly.audit
            let tap = ControlTap()
            assembly.parts.receiverOptions.onBytes = { tap.bytes($0) }
            assembly.parts.seen = { tap.fix($0) }
            let parts = assembly.parts
            let pipeline = try Pipeline(config: config, parts: parts, httpClient: httpClient, clock: board.clock, logger: logger)
            // Housekeeping in simulated time too, so the board writes the card as a tracker does per position.
            try await run(
                pipeline,
                extra: [board.service, maintenance(queue, clock: board.clock), QueueDamageWatch(queue: queue), control(pipeline, tap: tap, port: board.serialPort)])
            let checked = audit.summary
            if checked.isClean {
                logger.notice(
                    "simulated board: every stored position was measured after its power-on and is what the receiver reported",
                    metadata: [
                        "positions": "\(checked.checked)", "worst_error_m": "\(Int(checked.worstErrorM.rounded()))",
                        "faults_stored": "\(checked.faultsStored)",
                    ])
            } else {
                logger.error(
                    "simulated board: stored positions failed the check (see the errors above)",
                    metadata: [
                        "positions": "\(checked.checked)", "stale": "\(checked.stale)", "untrue": "\(checked.untrue)",
                        "faults_past_the_filter": "\(checked.faultsPastTheFilter)",
                    ])
            }
            try? await collector?.stop()
        }
    }

    private func run<C: Clock>(_ pipeline: Pipeline<C>, extra: [any Service] = []) async throws where C.Duration == Duration {
        let started = Date()
        let metrics = try await MetricsPublisher(config: config, pipeline: pipeline, started: started, problems: problems, logger: logger.labelled("tern.metrics")).services()
        let services = extra + pipeline.services + metrics + [watchdog(pipeline, started: started), statusPublisher(pipeline, started: started)]
        let group = ServiceGroup(configuration: .init(
            // A damaged queue ends the group gracefully (what waits is written), then tern exits to be restarted.
            services: services.map { .init(service: $0, failureTerminationBehavior: $0 is QueueDamageWatch ? .gracefullyShutdownGroup : .cancelGroup) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try? notifier.ready()
        logger.notice("tern running", metadata: ["device": "\(config.device)", "queue": "\(config.queuePath)"])
        defer { try? notifier.stopping() }
        try await group.run()
        await pipeline.shutdownUplink()
    }

    /// Another program reading the UART (gpsd, a terminal left open) steals bytes from tern and tern
    /// from it; root bypasses the exclusive open, so say it at start, with the fix. The installed
    /// service cannot see other users' processes (User=tern, ProtectProc=invisible): there `tern
    /// doctor`, run by an operator with sudo, names them.
    private func warnIfShared(_ device: String) {
        let scan = Doctor.scanHolders(of: Doctor.resolve(device) ?? device, procRoot: "/proc")
        let others = scan.holders.filter { $0.pid != getpid() }
        guard !others.isEmpty else {
            if scan.unreadable > 0 {
                logger.debug("other processes' open files are not visible here: sudo tern doctor shows who else holds the UART", metadata: ["device": "\(device)"])
            }
            return
        }
        logger.warning(
            "the receiver's UART is also open in another program: both lose sentences. Stop it (gpsd: systemctl disable --now gpsd.socket gpsd)",
            metadata: ["device": "\(device)", "holders": "\(others.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", "))"])
    }

    /// The control socket: live status, the receiver's bytes tapped, commands written to it.
    private func control<C: Clock>(_ pipeline: Pipeline<C>, tap: ControlTap, port: any SerialPort) -> any Service where C.Duration == Duration {
        let started = Date()
        return ControlServer(
            path: config.controlSocket, tap: tap, status: { [config, problems] in await pipeline.statusReport(config: config, started: started, problems: problems.current) },
            write: { try await port.write($0) }, logger: logger.labelled("tern.control"))
    }

    /// The queue's housekeeping every 5 minutes of `clock`: checkpoint, maximum age, ballast (`SQLitePositionQueue.maintain`).
    private func maintenance<C: Clock>(_ queue: SQLitePositionQueue, clock: C) -> any Service where C.Duration == Duration {
        TaskService("queue-maintenance") { [logger] in
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try await clock.sleep(for: .seconds(300))
                    do {
                        let dropped = try await queue.maintain()
                        if dropped.expired > 0 {
                            logger.warning(
                                "dropped queued positions older than store.max_age", metadata: ["expired": "\(dropped.expired)"])
                        }
                    } catch {
                        logger.error("queue maintenance failed (retried in 5 min)", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
    }

    /// Pings systemd's watchdog while the pipeline makes progress (`ProgressWatch`: the reader reads
    /// while the receiver is on, the forwarder finishes what it starts), and publishes a one-line
    /// status for `systemctl status`. A stuck loop stops the pings: systemd restarts the service.
    private func watchdog<C: Clock>(_ pipeline: Pipeline<C>, started: Date) -> any Service where C.Duration == Duration {
        TaskService("watchdog") { [notifier, config, problems, logger] in
            let interval = notifier.watchdogInterval ?? .seconds(30)
            try await cancelWhenGracefulShutdown {
                var watch = Self.progressWatch(config)
                let clock = ContinuousClock()
                let start = clock.now
                var stuck: String?
                while !Task.isCancelled {
                    let report = await pipeline.statusReport(config: config, started: started, problems: problems.current)
                    let verdict = watch.check(await pipeline.progressSample(now: clock.now - start))
                    if let verdict, stuck == nil {
                        logger.error("\(verdict): no more watchdog pings, systemd restarts tern (WatchdogSec)")
                    }
                    stuck = verdict
                    try? notifier.status(
                        (verdict.map { "STUCK: \($0); " } ?? "")
                            + "receiver \(report.gateway.receiverPowered ? "on" : "off") (\(report.receiverLink)), \(report.gateway.fixesAccepted) accepted, queue \(report.queueDepth ?? -1), uploaded \(report.uplink.uploaded)")
                    if verdict == nil { try? notifier.watchdog() }
                    try await Task.sleep(for: interval)
                }
            }
        }
    }

    /// The stalls the watchdog allows: a minute without a byte from a receiver that is on and
    /// connected (its link monitor says "silent" after 5 s), and a whole batch of requests at their
    /// deadline, plus a minute, for the forwarder (never under 5 minutes).
    static func progressWatch(_ config: TernConfig) -> ProgressWatch {
        let batch = config.uplink.timeout * max(1, config.uplink.batchSize) + .seconds(60)
        return ProgressWatch(readerStall: .seconds(60), forwarderStall: max(batch, .seconds(300)))
    }

    /// Writes the status report for `tern status` every 10 s; a failure is logged once (and its end).
    private func statusPublisher<C: Clock>(_ pipeline: Pipeline<C>, started: Date) -> any Service where C.Duration == Duration {
        let file = StatusFile(path: config.statusFile)
        return TaskService("status") { [config, logger, problems] in
            try await cancelWhenGracefulShutdown {
                var failing = false
                while !Task.isCancelled {
                    let report = await pipeline.statusReport(config: config, started: started, problems: problems.current)
                    do {
                        try file.write(report)
                        if failing { logger.notice("status file written again", metadata: ["path": "\(file.path)"]) }
                        failing = false
                    } catch {
                        if !failing {
                            logger.warning(
                                "cannot write the status file; `tern status` will not show the receiver. Set status_file to a writable path (default /run/tern, created by RuntimeDirectory=tern in tern.service)",
                                metadata: ["path": "\(file.path)", "error": "\(error.localizedDescription)"])
                        }
                        failing = true
                    }
                    try await Task.sleep(for: .seconds(10))
                }
            }
        }
    }

    private func receiverOptions(chipset: ChipsetWatch) -> NMEAReceiver.Options {
        let options = config.receiverOptions
        var reference = SystemClock.dateReference
        if let fixed = options.referenceDate { reference = { .notBefore(fixed) } }
        return NMEAReceiver.Options(
            dateReference: reference, health: .init(silenceTimeout: options.silenceTimeout), autobaud: options.autobaud,
            onSentence: { chipset.observe($0) })
    }

    /// The configured power method; command methods write to the receiver's own (reconnecting) port.
    private func makePowerSwitch(serialPort: any SerialPort) throws -> any PowerSwitch {
        func gpioLine(_ spec: TernConfig.GPIOLineSpec) -> GPIOLine {
            switch spec {
            case let .offset(offset): .offset(offset)
            case let .name(name): .name(name)
            }
        }
        switch config.power {
        case .none, .simulated:
            return NoPowerSwitch()
        case let .gpio(chip, line, activeLow):
            return try GPIOPowerSwitch(chip: chip, line: gpioLine(line), activeLow: activeLow)
        case let .l76x(chip, standbyLine, forceOnLine, sleep):
            // STANDBY starts high (running) so that a FORCE_ON pulse alone wakes the module in backup mode.
            let standby = try GPIOPowerSwitch(
                chip: chip, line: gpioLine(standbyLine), initiallyOn: true, consumer: "tern-standby")
            let forceOn = try GPIOPowerSwitch(chip: chip, line: gpioLine(forceOnLine), consumer: "tern-force-on")
            return L76XPowerSwitch(
                standby: standby, forceOn: forceOn, sleep: sleep == .backup ? .backup(serialPort) : .standby,
                clock: ContinuousClock())
        case .pmtkStandby:
            return try CommandPowerSwitch.pmtkStandby(serialPort: serialPort)
        case .ubxBackup:
            return try CommandPowerSwitch.ubxBackup(serialPort: serialPort)
        }
    }

    private func uplinkURL(collector: Collector?) throws -> URL {
        if let collector { return collector.url }
        guard let url = config.uplink.url else { throw ConfigError(key: "uplink.url", "missing") }
        return url
    }
}
