import Logging
import TernCore

/// The coordinator. It only brokers: fixes from the receiver go through the filter; accepted ones
/// are written to the queue and the forwarder is told; the scheduler decides when the receiver is
/// powered. Every decision is made by the injected collaborators.
public actor Gateway<C: Clock> where C.Duration == Duration {
    private let receiver: any GPSReceiver
    private var filter: any LocationFilter
    private let queue: any PositionQueue
    private let forwarder: any Forwarding
    private var scheduler: DutyCycleScheduler
    private let clock: C
    private let timer: WakeTimer<C>
    private let logger: Logger
    private let start: C.Instant
    private var poweredSince: Duration?
    private var pending: [Position] = []
    private var current = GatewayStatus()

    /// Accepted positions kept in memory while the store fails, before the oldest are dropped.
    public let maxPendingWrites: Int

    public init(
        receiver: any GPSReceiver, filter: any LocationFilter, queue: any PositionQueue,
        forwarder: any Forwarding, scheduler: DutyCycleScheduler, clock: C,
        maxPendingWrites: Int = 10_000, logger: Logger = Logger(label: "tern.gateway")
    ) {
        self.receiver = receiver
        self.filter = filter
        self.queue = queue
        self.forwarder = forwarder
        self.scheduler = scheduler
        self.clock = clock
        self.timer = WakeTimer(clock: clock)
        self.maxPendingWrites = maxPendingWrites
        self.logger = logger
        self.start = clock.now
    }

    /// A snapshot of the counters, with the receiver's on-time up to now.
    public func status() -> GatewayStatus {
        var snapshot = current
        if let poweredSince { snapshot.receiverOnSeconds += (elapsed - poweredSince).seconds }
        return snapshot
    }

    /// Runs until the receiver's fixes end or the task is cancelled; powers the receiver off on the way out.
    public func run() async throws {
        await perform(scheduler.handle(.start(now: elapsed)))
        defer { logger.info("gateway stopped", metadata: ["fixes": "\(current.fixesSeen)"]) }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [timer] in
                    await timer.run { _ in await self.timerFired() }
                }
                group.addTask {
                    for try await fix in self.receiver.fixes() {
                        await self.handle(fix)
                    }
                }
                // Whichever ends first (fixes finished, an error, cancellation) ends the gateway.
                try await group.next()
                group.cancelAll()
            }
        } catch {
            await shutDown()
            throw error
        }
        await shutDown()
    }

    /// Handles one fix from the receiver. Exposed for the run loop; tests drive it through a fake receiver.
    func handle(_ fix: Fix) async {
        defer { current.fixesSeen += 1 }
        guard scheduler.wantsFix else {
            current.fixesUnwanted += 1
            return
        }
        switch filter.evaluate(fix) {
        case let .reject(reason):
            current.rejections[reason.kind, default: 0] += 1
            logger.debug("fix rejected", metadata: ["reason": "\(reason)"])
        case let .accept(fix):
            current.fixesAccepted += 1
            pending.append(Position(fix: fix))
            await writePending()
            await perform(scheduler.handle(.fixAccepted(now: elapsed)))
        }
    }

    private func timerFired() async {
        await perform(scheduler.handle(.timerFired(now: elapsed)))
    }

    /// Writes accepted positions in order; on a store failure keeps them for the next try.
    private func writePending() async {
        while let position = pending.first {
            do {
                // The write runs in its own task so that cancellation (shutdown) cannot cut it short.
                _ = try await Task { [queue] in try await queue.enqueue(position) }.value
                pending.removeFirst()
                current.enqueued += 1
                forwarder.positionsAvailable()
            } catch {
                current.lastError = "\(error)"
                logger.error("cannot store position; keeping it in memory and retrying", metadata: ["error": "\(error)"])
                if pending.count > maxPendingWrites {
                    pending.removeFirst(pending.count - maxPendingWrites)
                    logger.critical("store failing for long: dropped the oldest unstored positions")
                }
                break
            }
        }
        current.pendingWrites = pending.count
    }

    private func perform(_ actions: [DutyCycleScheduler.Action]) async {
        current.powerCycles = scheduler.cyclesWithFix + scheduler.timeouts
        current.acquisitionTimeouts = scheduler.timeouts
        for action in actions {
            switch action {
            case .powerOn: await setPower(on: true)
            case .powerOff: await setPower(on: false)
            case let .wake(at): timer.schedule(at: start.advanced(by: at))
            }
        }
    }

    private func setPower(on: Bool) async {
        do {
            if on { try await receiver.powerOn() } else { try await receiver.powerOff() }
        } catch {
            current.lastError = "\(error)"
            logger.error("cannot switch receiver power", metadata: ["on": "\(on)", "error": "\(error)"])
            return
        }
        current.receiverPowered = on
        let now = elapsed
        if on {
            poweredSince = poweredSince ?? now
        } else if let since = poweredSince {
            current.receiverOnSeconds += (now - since).seconds
            poweredSince = nil
        }
        logger.debug("receiver power", metadata: ["on": "\(on)"])
    }

    private func shutDown() async {
        await perform(scheduler.handle(.stop))
        timer.schedule(at: nil)
    }

    private var elapsed: Duration { start.duration(to: clock.now) }
}

extension RejectionReason {
    /// A stable name for counting, e.g. "poorAccuracy".
    public var kind: String {
        switch self {
        case .noFix: "noFix"
        case .invalidCoordinate: "invalidCoordinate"
        case .poorAccuracy: "poorAccuracy"
        case .outOfSequence: "outOfSequence"
        case .duplicate: "duplicate"
        case .implausibleJump: "implausibleJump"
        }
    }
}
