import Foundation
import Logging
import TernCore

/// The coordinator's shell: it performs what `GatewayCore` decides (the one core the simulator
/// drives too) and reports back. Fixes from the receiver go in; power switching, wake-ups, writes to
/// the queue, telling the forwarder and logging come out. The scheduler alone decides when the
/// receiver is powered; the filter what is stored; the group commit when it is written.
///
/// The loop is `GatewayCore`'s: the shell calls `start`, `fixReceived` for every epoch,
/// `timerFired` and `commitTimerFired` at the times asked, `powerSwitched` after each switch,
/// `written`/`writeFailed` after each write, `shutdownWrites` and `stop` at the end, and performs the
/// actions they return in order. The core talks to the scheduler and the filter itself.
public actor Gateway<C: Clock> where C.Duration == Duration {
    private let receiver: any GPSReceiver
    private let queue: any PositionQueue
    private let forwarder: any Forwarding
    private var core: GatewayCore
    private let clock: C
    private let timer: WakeTimer<C>
    private let logger: Logger
    private let memory: (any SchedulerMemoryStore)?
    private let wallClock: @Sendable () -> Date
    private let synchronisedTime: @Sendable () -> Date?
    /// Told of every fix the filter accepts, at once (before it is written): the simulated board's audit.
    private let accepted: @Sendable (Fix) -> Void
    /// Told of every fix the receiver reports (the control socket's tap).
    private let seen: @Sendable (Fix) -> Void
    /// Given every fix whose UTC the core trusts (chrony's SOCK refclock), nil: nowhere.
    private let timeSink: (any TimeSink)?
    private let start: C.Instant
    private let commitTimer: WakeTimer<C>
    /// Positions the queue's capacity rules dropped in the current burst (logged when it starts and ends).
    private var dropBurst: QueueDrops?
    /// `status()`'s counters: the core's when the shell last finished performing an event.
    private var settled = GatewayStatus()
    /// Who waits for the write in flight to have reported to the core (the shutdown).
    private var writeWaiters: [CheckedContinuation<Void, Never>] = []
    private var settledAt = Duration.zero

    /// How often (at most) what the scheduler has learnt is saved to `memory`; also at shutdown.
    public var memorySaveInterval: Duration { core.memorySaveInterval }

    /// - Parameters:
    ///   - configuration: the scheduler, the filter and the group commit (`GatewayCore.Configuration`).
    ///   - memory: where the scheduler's memory is kept across restarts (nil: start afresh each time).
    ///   - wallClock: the time of day, to measure how long Tern was down between two runs.
    ///   - synchronisedTime: UTC now when the system clock is known to be synchronised, else nil: dates
    ///     the first power-on for `FixFreshness` (later ones are dated by the receiver's own clock).
    ///   - timeSink: where trusted receiver times go (`[time] chrony_socket`); nil: nowhere.
    public init(
        configuration: GatewayCore.Configuration, receiver: any GPSReceiver, queue: any PositionQueue,
        forwarder: any Forwarding, clock: C,
        memory: (any SchedulerMemoryStore)? = nil, wallClock: @escaping @Sendable () -> Date = { Date() },
        synchronisedTime: @escaping @Sendable () -> Date? = { nil }, accepted: @escaping @Sendable (Fix) -> Void = { _ in },
        seen: @escaping @Sendable (Fix) -> Void = { _ in }, timeSink: (any TimeSink)? = nil,
        logger: Logger = Logger(label: "tern.gateway")
    ) {
        self.timeSink = timeSink
        self.accepted = accepted
        self.seen = seen
        self.memory = memory
        self.wallClock = wallClock
        self.synchronisedTime = synchronisedTime
        self.receiver = receiver
        self.queue = queue
        self.forwarder = forwarder
        self.core = GatewayCore(configuration: configuration)
        self.clock = clock
        self.timer = WakeTimer(clock: clock)
        self.commitTimer = WakeTimer(clock: clock)
        self.logger = logger
        self.start = clock.now
    }

    /// The counters as of the last event the shell finished performing (a fix counts once its
    /// power-off and writes were done), with the receiver's on-time and the uptime up to now.
    public func status() -> GatewayStatus {
        var snapshot = settled
        let now = elapsed
        if snapshot.receiverPowered { snapshot.receiverOnSeconds += (now - settledAt).seconds }
        snapshot.uptimeSeconds = now.seconds
        snapshot.scheduler = core.scheduler.summary(now: now)
        return snapshot
    }

    /// Runs until the receiver's fixes end or the task is cancelled; powers the receiver off on the way out.
    public func run() async throws {
        await resumeMemory()
        await perform(core.start(now: elapsed, synchronisedTime: synchronisedTime()))
        defer { logger.info("gateway stopped", metadata: ["fixes": "\(core.counters.fixesSeen)"]) }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [timer] in
                    await timer.run { _ in await self.timerFired() }
                }
                group.addTask { [commitTimer] in
                    await commitTimer.run { _ in await self.commitTimerFired() }
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
            await shutDownToTheEnd()
            throw error
        }
        await shutDownToTheEnd()
    }

    /// `shutDown()` run to its end although a cancellation (SIGTERM, a graceful shutdown) usually
    /// brings it: an unstructured task does not inherit the cancellation, so the last commits reach
    /// the queue and the power-off reaches the receiver (a receiver slept by command, PMTK161 or UBX
    /// backup, would otherwise stay on after tern has gone while its log said "off"). The power-off
    /// gets `powerOffLimit`: a UART that has gone away is waited for, and must not hold the stop
    /// until systemd kills tern (`TimeoutStopSec=20s`).
    private func shutDownToTheEnd() async {
        await Task {
            await self.shutDown()
            await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.powerOffForGood(); return true }
                group.addTask { [clock] in
                    do { try await clock.sleep(for: Self.powerOffLimit) } catch { return true }
                    return false
                }
                let inTime = await group.next() ?? true
                group.cancelAll()
                if !inTime {
                    self.logger.error(
                        "the receiver did not take the power-off in time; it may stay on until tern starts again",
                        metadata: ["limit": "\(Self.powerOffLimit)"])
                }
            }
        }.value
    }

    /// How long a stopping gateway waits for the receiver's power-off.
    public static var powerOffLimit: Duration { .seconds(5) }

    private func powerOffForGood() async {
        await perform(core.stop(now: elapsed))
    }

    /// Handles one fix from the receiver. Exposed for the run loop; tests drive it through a fake receiver.
    func handle(_ fix: Fix) async {
        seen(fix)
        await perform(core.fixReceived(fix, now: elapsed, synchronisedTime: synchronisedTime()))
    }

    private func timerFired() async {
        await perform(core.timerFired(now: elapsed, synchronisedTime: synchronisedTime()))
    }

    /// Performs the core's actions in order; what they lead to (a write's outcome) is performed too.
    private func perform(_ actions: [GatewayCore.Action]) async {
        var actions = actions[...]
        while let action = actions.popFirst() {
            switch action {
            case .powerOn: await setPower(on: true)
            case .powerOff: await setPower(on: false)
            case let .wake(at): timer.schedule(at: at.map { start.advanced(by: $0) })
            case let .commitWake(at): commitTimer.schedule(at: at.map { start.advanced(by: $0) })
            case let .write(positions): actions.append(contentsOf: await write(positions))
            case let .accepted(fix): accepted(fix)
            case let .saveMemory(snapshot): await saveMemory(snapshot)
            case let .note(note): log(note)
            case let .trustedTime(fix): if let timeSink, let sample = ClockSample(fix) { timeSink.offer(sample) }
            }
        }
        settledAt = elapsed
        settled = core.status(now: settledAt)
    }

    private func log(_ note: GatewayCore.Note) {
        switch note {
        case let .staleFix(fix, poweredOnAt):
            logger.notice(
                "ignoring a fix measured before the receiver's last power-on (left over from the previous power cycle)",
                metadata: ["fix_time": "\(fix.time)", "powered_on": "\(poweredOnAt.map { "\($0)" } ?? "-")"])
        case let .rejected(reason):
            logger.debug("fix rejected", metadata: ["reason": "\(reason)"])
        case let .reanchored(n, fix):
            logger.notice(
                "re-anchored the filter: fixes far from the last accepted one agree with each other (moved while not tracked, or a bad reference)",
                metadata: ["consistent_fixes": "\(n)", "fix_time": "\(fix.time)"])
        case let .dropped(count, waiting):
            logger.critical(
                "store failing for long: dropped the oldest accepted positions that could not be written",
                metadata: ["dropped": "\(count)", "waiting": "\(waiting)"])
        case let .invalidSchedulerEvent(what):
            logger.error("programming error, please report it: the scheduler ignored an event its state cannot meet", metadata: ["event": "\(what)"])
        }
    }

    /// Resumes what the scheduler learnt before the last restart, if anything was saved.
    private func resumeMemory() async {
        guard let memory else { return }
        do {
            guard let (saved, savedAt) = try await memory.loadSchedulerMemory() else { return }
            let downtime = wallClock().timeIntervalSince(savedAt)
            guard downtime >= 0 else {
                logger.warning("scheduler memory saved in the future (was the clock set back?): starting afresh")
                return
            }
            core.remember(saved, downtime: .seconds(downtime))
            logger.info("resuming what the scheduler had learnt", metadata: ["saved_seconds_ago": "\(Int(downtime))"])
        } catch {
            logger.warning("cannot read the scheduler memory: starting afresh", metadata: ["error": "\(error)"])
        }
    }

    private func saveMemory(_ snapshot: FixScheduler.Memory) async {
        guard let memory else { return }
        let time = wallClock()
        do {
            // In its own task so that cancellation (shutdown) cannot cut the write short.
            try await Task { try await memory.saveSchedulerMemory(snapshot, at: time) }.value
        } catch {
            logger.warning("cannot save the scheduler memory; a restart will start afresh", metadata: ["error": "\(error)"])
        }
    }

    private func commitTimerFired() async {
        await perform(core.commitTimerFired(now: elapsed))
    }

    /// Writes positions in one transaction; returns what the core makes of the outcome.
    private func write(_ positions: [Position]) async -> [GatewayCore.Action] {
        defer {
            // The core has the outcome now: whoever waited for it goes on.
            let waiters = writeWaiters
            writeWaiters = []
            for waiter in waiters { waiter.resume() }
        }
        do {
            // The write runs in its own task so that cancellation (shutdown) cannot cut it short.
            let result = try await Task { [queue] in try await queue.enqueue(contentsOf: positions) }.value
            noteDrops(result.dropped)
            if result.stored > 0 { forwarder.positionsAvailable() }
            return core.written(result, now: elapsed)
        } catch {
            let actions = core.writeFailed("\(error)", now: elapsed)
            if core.writeFailures == 1 || core.writeFailures.isMultiple(of: 10) {
                logger.error(
                    "cannot store positions; keeping them in memory and retrying",
                    metadata: ["error": "\(error)", "waiting": "\(core.pendingWrites)", "attempt": "\(core.writeFailures)"])
            }
            return actions
        }
    }

    /// Logs the queue's capacity drops once when a burst of them starts, and its total when it ends.
    private func noteDrops(_ dropped: QueueDrops) {
        if dropped.total > 0 {
            if dropBurst == nil {
                logger.warning(
                    "queue full: dropping positions by its overflow policy (store.overflow); counted in tern status",
                    metadata: ["dropped": "\(dropped)"])
            }
            dropBurst = (dropBurst ?? QueueDrops()) + dropped
        } else if let burst = dropBurst {
            logger.notice("queue has room again", metadata: ["dropped_in_burst": "\(burst.total)"])
            dropBurst = nil
        }
    }

    private func setPower(on: Bool) async {
        do {
            if on { try await receiver.powerOn() } else { try await receiver.powerOff() }
        } catch {
            core.powerSwitchFailed("\(error)")
            logger.error("cannot switch receiver power", metadata: ["on": "\(on)", "error": "\(error)"])
            return
        }
        core.powerSwitched(on: on, now: elapsed, synchronisedTime: synchronisedTime())
        logger.debug("receiver power", metadata: ["on": "\(on)"])
    }

    private func shutDown() async {
        // What waits to be written is written now (twice if the first attempt fails), after a write in
        // flight (its own task; it completes on this actor) has reported. The fix thinning holds is
        // the track's last point so far: it is kept.
        while core.isWriting { await withCheckedContinuation { writeWaiters.append($0) } }
        await perform(core.shutdownWrites(now: elapsed))
        if core.pendingWrites > 0 { await perform(core.shutdownWrites(now: elapsed)) }
        if core.pendingWrites > 0 {
            logger.critical(
                "stopping with accepted positions that could not be stored: they are lost",
                metadata: ["count": "\(core.pendingWrites)", "error": "\(core.counters.lastError ?? "-")"])
        }
        if let snapshot = core.memory(now: elapsed) { await saveMemory(snapshot) }
    }

    private var elapsed: Duration { start.duration(to: clock.now) }
}
