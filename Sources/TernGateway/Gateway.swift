import Foundation
import Logging
import TernCore

/// The coordinator. It only brokers: every fix from the receiver goes to the `FixScheduler` (unless
/// `FixFreshness` finds it measured before the receiver's last power-on); the fix it delivers goes
/// through the filter, the verdict goes back to the scheduler at once (so the receiver is switched
/// off without waiting for the disk), and an accepted one is then written to the queue and the
/// forwarder is told. The scheduler alone decides when the receiver is powered.
///
/// The loop is the one documented in `FixSchedulerTypes.swift`: `.start`, `.fixReceived` for every
/// fix, `.delivered` after the filter's verdict, `.timerFired` at each requested wake-up, `.stop`.
public actor Gateway<C: Clock> where C.Duration == Duration {
    private let receiver: any GPSReceiver
    private var filter: any LocationFilter
    private let queue: any PositionQueue
    private let forwarder: any Forwarding
    private var scheduler: FixScheduler
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
    private var freshness = FixFreshness()
    private var memorySavedAt: Duration?
    private let start: C.Instant
    private var poweredSince: Duration?
    /// When the current power session's first usable fix arrived (the filter's warm-up runs from it).
    private var sessionFirstFixAt: Duration?
    /// When accepted positions are written (group commit, retries after store failures).
    private var commits: GroupCommit
    private let commitTimer: WakeTimer<C>
    /// Positions the queue's capacity rules dropped in the current burst (logged when it starts and ends).
    private var dropBurst: QueueDrops?
    private var current = GatewayStatus()

    /// How often (at most) what the scheduler has learnt is saved to `memory`; also at shutdown.
    public let memorySaveInterval: Duration

    /// - Parameters:
    ///   - memory: where the scheduler's memory is kept across restarts (nil: start afresh each time).
    ///   - wallClock: the time of day, to measure how long Tern was down between two runs.
    ///   - synchronisedTime: UTC now when the system clock is known to be synchronised, else nil: dates
    ///     the first power-on for `FixFreshness` (later ones are dated by the receiver's own clock).
    ///   - commitWindow: how long, and how many, accepted positions may wait to be written together.
    ///   - maxPendingWrites: accepted positions kept in memory while the store fails, before the oldest are dropped.
    public init(
        receiver: any GPSReceiver, filter: any LocationFilter, queue: any PositionQueue,
        forwarder: any Forwarding, scheduler: FixScheduler, clock: C,
        memory: (any SchedulerMemoryStore)? = nil, wallClock: @escaping @Sendable () -> Date = { Date() },
        synchronisedTime: @escaping @Sendable () -> Date? = { nil },
        memorySaveInterval: Duration = .seconds(300), commitWindow: GroupCommit.Window = GroupCommit.Window(),
        maxPendingWrites: Int = 10_000, accepted: @escaping @Sendable (Fix) -> Void = { _ in },
        seen: @escaping @Sendable (Fix) -> Void = { _ in }, logger: Logger = Logger(label: "tern.gateway")
    ) {
        self.accepted = accepted
        self.seen = seen
        self.memory = memory
        self.wallClock = wallClock
        self.synchronisedTime = synchronisedTime
        self.memorySaveInterval = memorySaveInterval
        self.receiver = receiver
        self.filter = filter
        self.queue = queue
        self.forwarder = forwarder
        self.scheduler = scheduler
        self.clock = clock
        self.timer = WakeTimer(clock: clock)
        self.commitTimer = WakeTimer(clock: clock)
        self.commits = GroupCommit(window: commitWindow, maxPending: maxPendingWrites)
        self.logger = logger
        self.start = clock.now
    }

    /// A snapshot of the counters, with the receiver's on-time up to now.
    public func status() -> GatewayStatus {
        var snapshot = current
        let now = elapsed
        if let poweredSince { snapshot.receiverOnSeconds += (now - poweredSince).seconds }
        snapshot.uptimeSeconds = now.seconds
        snapshot.scheduler = scheduler.summary(now: now)
        return snapshot
    }

    /// Runs until the receiver's fixes end or the task is cancelled; powers the receiver off on the way out.
    public func run() async throws {
        await resumeMemory()
        await perform(scheduler.handle(.start(now: elapsed)))
        defer { logger.info("gateway stopped", metadata: ["fixes": "\(current.fixesSeen)"]) }
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
        await perform(scheduler.handle(.stop))
        timer.schedule(at: nil)
        current.nextWake = nil
    }

    /// Handles one fix from the receiver. Exposed for the run loop; tests drive it through a fake receiver.
    func handle(_ fix: Fix) async {
        seen(fix)
        // No-fix epochs (still acquiring) only tell the scheduler whether satellites are heard.
        let usable = fix.quality.isUsable
        defer { if usable { current.fixesSeen += 1 } else { current.noFixEpochs += 1 } }
        // A receiver that cannot be switched off (no supply switch) keeps talking while "off".
        guard scheduler.isPowered else {
            if usable { current.fixesUnwanted += 1 }
            return
        }
        if usable, !freshness.isFresh(fix, arrivedAt: elapsed) {
            current.staleFixes += 1
            logger.notice(
                "ignoring a fix measured before the receiver's last power-on (left over from the previous power cycle)",
                metadata: ["fix_time": "\(fix.time)", "powered_on": "\(freshness.poweredOnAt.map { "\($0)" } ?? "-")"])
            return
        }
        if usable, sessionFirstFixAt == nil { sessionFirstFixAt = elapsed }
        await perform(scheduler.handle(.fixReceived(fix, now: elapsed)))
    }

    private func timerFired() async {
        defer { current.wakeUps += 1 }
        current.nextWake = nil
        await perform(scheduler.handle(.timerFired(now: elapsed)))
    }

    /// Performs the scheduler's actions: wake-up requests first (they need no waiting), then power
    /// changes in order, then deliveries, whose verdicts may bring further actions (a power-off comes
    /// before the accepted position is written: the receiver need not stay on for the disk).
    private func perform(_ actions: [FixSchedulerAction]) async {
        var deliveries: [Fix] = []
        for case let .wake(at) in actions {
            current.nextWake = at
            timer.schedule(at: start.advanced(by: at))
        }
        for action in actions {
            switch action {
            case .powerOn: await setPower(on: true)
            case .powerOff: await setPower(on: false)
            case let .deliver(fix): deliveries.append(fix)
            case .wake: break
            }
        }
        current.acquisitionTimeouts = scheduler.timeouts
        for fix in deliveries {
            // A thinned fix is the fix the scheduler asked for all the same: it is told it arrived.
            let store = evaluate(fix)
            await perform(scheduler.handle(.delivered(accepted: store != nil, now: elapsed)))
            guard let store else { continue }
            for kept in store { await performCommits(commits.accepted(Position(fix: kept), now: elapsed)) }
            if memorySavedAt.map({ elapsed - $0 >= memorySaveInterval }) ?? true { await saveMemory() }
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
            scheduler.remember(saved, downtime: .seconds(downtime))
            logger.info("resuming what the scheduler had learnt", metadata: ["saved_seconds_ago": "\(Int(downtime))"])
        } catch {
            logger.warning("cannot read the scheduler memory: starting afresh", metadata: ["error": "\(error)"])
        }
    }

    private func saveMemory() async {
        let now = elapsed
        guard let memory, let snapshot = scheduler.memory(now: now) else { return }
        memorySavedAt = now
        let time = wallClock()
        do {
            // In its own task so that cancellation (shutdown) cannot cut the write short.
            try await Task { try await memory.saveSchedulerMemory(snapshot, at: time) }.value
        } catch {
            logger.warning("cannot save the scheduler memory; a restart will start afresh", metadata: ["error": "\(error)"])
        }
    }

    /// Runs the filter on the fix the scheduler chose and counts the verdict. Returns nil when it was
    /// rejected, else the fixes to store now (none when thinning holds or drops it).
    private func evaluate(_ fix: Fix) -> [Fix]? {
        let now = elapsed
        let context = FilterContext(
            now: now, synchronisedTime: synchronisedTime(), sessionAge: sessionFirstFixAt.map { now - $0 })
        let verdict = filter.evaluate(fix, context: context)
        for reason in verdict.thinned { current.thinned[reason.kind, default: 0] += 1 }
        if let reason = verdict.rejection {
            current.rejections[reason.kind, default: 0] += 1
            logger.debug("fix rejected", metadata: ["reason": "\(reason)"])
            return nil
        }
        if let n = verdict.reanchoredAfter {
            current.reanchors += 1
            logger.notice(
                "re-anchored the filter: fixes far from the last accepted one agree with each other (moved while not tracked, or a bad reference)",
                metadata: ["consistent_fixes": "\(n)", "fix_time": "\(fix.time)"])
        }
        current.fixesAccepted += 1
        current.lastAccepted = fix
        accepted(fix)
        return verdict.store
    }

    private func commitTimerFired() async {
        await performCommits(commits.timerFired(now: elapsed))
    }

    /// Performs `GroupCommit`'s actions: writes (one transaction each; the outcome goes back to it),
    /// wake-ups and drops.
    private func performCommits(_ actions: [GroupCommit.Action]) async {
        var actions = actions[...]
        while let action = actions.popFirst() {
            switch action {
            case let .write(positions):
                actions.append(contentsOf: await write(positions))
            case let .wake(at):
                commitTimer.schedule(at: at.map { start.advanced(by: $0) })
            case let .dropped(count):
                current.droppedUnwritten += count
                logger.critical(
                    "store failing for long: dropped the oldest accepted positions that could not be written",
                    metadata: ["dropped": "\(count)", "waiting": "\(commits.pending.count)"])
            }
        }
        current.pendingWrites = commits.pending.count
    }

    /// Writes positions in one transaction; returns what `GroupCommit` makes of the outcome.
    private func write(_ positions: [Position]) async -> [GroupCommit.Action] {
        do {
            // The write runs in its own task so that cancellation (shutdown) cannot cut it short.
            let result = try await Task { [queue] in try await queue.enqueue(contentsOf: positions) }.value
            current.enqueued += result.stored
            current.queueDrops = current.queueDrops + result.dropped
            noteDrops(result.dropped)
            if result.stored > 0 { forwarder.positionsAvailable() }
            return commits.written(now: elapsed)
        } catch {
            current.lastError = "\(error)"
            let actions = commits.writeFailed(now: elapsed)
            if commits.failures == 1 || commits.failures.isMultiple(of: 10) {
                logger.error(
                    "cannot store positions; keeping them in memory and retrying",
                    metadata: ["error": "\(error)", "waiting": "\(commits.pending.count)", "attempt": "\(commits.failures)"])
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
            current.lastError = "\(error)"
            logger.error("cannot switch receiver power", metadata: ["on": "\(on)", "error": "\(error)"])
            return
        }
        let now = elapsed
        if on {
            if poweredSince == nil {
                current.powerCycles += 1
                sessionFirstFixAt = nil
                freshness.poweredOn(at: now, systemTime: synchronisedTime())
            }
            poweredSince = poweredSince ?? now
        } else if let since = poweredSince {
            current.receiverOnSeconds += (now - since).seconds
            poweredSince = nil
        }
        current.receiverPowered = on
        logger.debug("receiver power", metadata: ["on": "\(on)"])
    }

    private func shutDown() async {
        // What waits to be written is written now (twice if the first attempt fails), after a write in
        // flight (its own task; it completes on this actor) has reported.
        while commits.isWriting { await Task.yield() }
        // The fix thinning holds is the track's last point so far: it is kept.
        for held in filter.flush() { _ = commits.accepted(Position(fix: held), now: elapsed) }
        for _ in 0..<2 where !commits.pending.isEmpty { await performCommits(commits.shutdown()) }
        if !commits.pending.isEmpty {
            logger.critical(
                "stopping with accepted positions that could not be stored: they are lost",
                metadata: ["count": "\(commits.pending.count)", "error": "\(current.lastError ?? "-")"])
        }
        commitTimer.schedule(at: nil)
        await saveMemory()
    }

    private var elapsed: Duration { start.duration(to: clock.now) }
}
