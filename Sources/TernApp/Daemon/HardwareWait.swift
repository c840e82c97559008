import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TernCore
import TernGateway

/// Waits at start for hardware that is missing or busy (the UART not there yet, a gpiochip line held
/// by another program) instead of exiting: an exit would restart the unit until systemd's start
/// limit locks it out, and tracking would stop for good because a receiver was unplugged at boot.
///
/// While it waits, systemd hears READY and watchdog pings with a status line naming what is awaited,
/// and `tern status` reads a report whose receiver link says it (degraded, exit 3). SIGTERM/SIGINT
/// end the wait cleanly. Retries after 1 s, doubling to 30 s.
struct HardwareWait: Sendable {
    let config: TernConfig
    let notifier: SystemdNotifier
    let logger: Logger

    /// `open()`'s result, or nil when the daemon was told to stop while waiting.
    func open<T: Sendable>(_ what: String, _ open: @escaping @Sendable () async throws -> T) async throws -> T? {
        if let value = try? await open() { return value }
        let opened = Mutex<T?>(nil)
        let waiter = TaskService("wait for \(what)") { [self] in
            try await cancelWhenGracefulShutdown {
                let value = try await retry(what, open)
                opened.withLock { $0 = value }
            }
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: waiter, successTerminationBehavior: .gracefullyShutdownGroup)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        return opened.withLock { $0 }
    }

    private func retry<T: Sendable>(_ what: String, _ open: @Sendable () async throws -> T) async throws -> T {
        let started = Date()
        let backoff = Backoff(base: .seconds(1), maximum: .seconds(30), jitter: 0)
        var attempt = 0
        var lastReason = ""
        try? notifier.ready()
        while true {
            do {
                let value = try await open()
                logger.notice("\(what) is usable now; starting", metadata: ["waited_s": "\(Int(Date().timeIntervalSince(started)))"])
                return value
            } catch {
                let reason = "\(error)"
                if reason != lastReason {
                    logger.error("waiting for \(what) (retrying; tern run does not exit)", metadata: ["reason": "\(reason)"])
                    lastReason = reason
                }
                try? notifier.status("waiting for \(what): \(reason)")
                try? notifier.watchdog()
                try? StatusFile(path: config.statusFile).write(waitingReport(what, reason: reason, started: started))
                attempt += 1
                try await Task.sleep(for: backoff.delay(attempt: attempt, unitRandom: 0))
            }
        }
    }

    private func waitingReport(_ what: String, reason: String, started: Date) -> StatusReport {
        StatusReport(
            updated: Date(), started: started, pid: ProcessInfo.processInfo.processIdentifier, device: config.device,
            receiverLink: "waiting for \(what): \(reason)", alwaysPowered: config.power == .none,
            gateway: GatewayStatus(), uplink: ForwarderStatus(), queueDepth: nil)
    }
}

extension TernConfig.Power {
    /// What `HardwareWait` says it waits for when this power method cannot be opened.
    var waitedName: String {
        switch self {
        case let .gpio(chip, line, _): "the power switch (\(chip) line \(line))"
        case let .l76x(chip, standby, forceOn, _): "the L76X lines (\(chip) lines \(standby) and \(forceOn))"
        case .pmtkStandby, .ubxBackup: "the receiver's UART for power commands"
        case .none, .simulated: "the power switch"
        }
    }
}
