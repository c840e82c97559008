import Foundation

/// The gateway's decisions from a fix to a stored position, pure: events in, actions out. The
/// daemon's `Gateway` actor and the simulator (`tern simulate`, `tern-bench policy`) are two thin
/// shells around this one core, so a simulated figure comes from the decisions the device makes.
///
/// It brokers between the `FixScheduler`, the `LocationFilter`, `FixFreshness` and `GroupCommit`:
/// every usable fix from the powered receiver goes to the scheduler unless it was measured before the
/// receiver's last power-on; the fix the scheduler delivers goes through the filter; the verdict goes
/// back to the scheduler at once (a power-off comes before the write: the receiver need not stay on
/// for the disk); what the filter stores waits in the group commit until it is written.
///
/// The shell performs the actions in order and reports back: `powerSwitched` after a switch that
/// worked, `written`/`writeFailed` after a `.write`, `timerFired`/`commitTimerFired` at the times
/// asked. Time is a `Duration` since the shell's start.
public struct GatewayCore: Sendable {
    public enum Action: Sendable, Hashable {
        case powerOn, powerOff
        /// Call `timerFired` at this time (nil: no wake-up pending).
        case wake(at: Duration?)
        /// Call `commitTimerFired` at this time (nil: none).
        case commitWake(at: Duration?)
        /// Write these positions in one transaction; report `written` or `writeFailed`.
        case write([Position])
        /// The filter accepted this fix (before it is written: the simulated board's audit).
        case accepted(Fix)
        /// Save what the scheduler has learnt (at most every `memorySaveInterval`).
        case saveMemory(FixScheduler.Memory)
        /// Something an operator should read in the log.
        case note(Note)
        /// This fix's UTC can be trusted to set the system clock (see `fixReceived`): hand it to the
        /// time sink (chrony) at once.
        case trustedTime(Fix)
    }

    public enum Note: Sendable, Hashable {
        /// A fix measured before the receiver's last power-on (left over from the previous cycle).
        case staleFix(Fix, poweredOnAt: Date?)
        case rejected(RejectionReason)
        /// The filter replaced its reference after this many consistent fixes far from it.
        case reanchored(consistentFixes: Int, fix: Fix)
        /// The store failed for long: this many of the oldest unwritten positions were given up.
        case dropped(count: Int, waiting: Int)
        /// The scheduler met an event its state cannot (a programming error): what and where.
        case invalidSchedulerEvent(String)
    }

    public private(set) var scheduler: FixScheduler
    private var filter: any LocationFilter
    private var freshness = FixFreshness()
    /// A synchronised system clock that contradicts a fix's time (by the filter's default limits)
    /// keeps that time from the clock.
    private let timeSanity = TimeSanityRule()
    private var commits: GroupCommit
    /// When the current power session's first usable fix arrived (the filter's warm-up runs from it).
    private var sessionFirstFixAt: Duration?
    private var poweredSince: Duration?
    private var memorySavedAt: Duration?
    /// The counters; `status(now:)` adds what runs on (on-time, uptime, the scheduler's summary).
    public private(set) var counters = GatewayStatus()
    public let memorySaveInterval: Duration
    /// What the scheduler has learnt is saved at most this often: a restart loses at most 5 minutes of it.
    public static let defaultMemorySaveInterval = Duration.seconds(300)

    public init(
        scheduler: FixScheduler, filter: any LocationFilter, commitWindow: GroupCommit.Window = GroupCommit.Window(),
        maxPendingWrites: Int = GroupCommit.defaultMaxPending, memorySaveInterval: Duration = GatewayCore.defaultMemorySaveInterval
    ) {
        self.scheduler = scheduler
        self.filter = filter
        self.commits = GroupCommit(window: commitWindow, maxPending: maxPendingWrites)
        self.memorySaveInterval = memorySaveInterval
    }

    /// Positions accepted and not yet written, and consecutive failed writes.
    public var pendingWrites: Int { commits.pending.count }
    public var writeFailures: Int { commits.failures }
    public var isWriting: Bool { commits.isWriting }

    /// Resumes what an earlier run's scheduler had learnt, `downtime` ago.
    public mutating func remember(_ memory: FixScheduler.Memory, downtime: Duration) {
        scheduler.remember(memory, downtime: downtime)
    }

    /// What the scheduler has learnt, to keep across a restart (nil before its first fix).
    public func memory(now: Duration) -> FixScheduler.Memory? { scheduler.memory(now: now) }

    public mutating func start(now: Duration, synchronisedTime: Date? = nil) -> [Action] {
        perform(scheduler.handle(.start(now: now)), now: now, synchronisedTime: synchronisedTime)
    }

    /// The receiver reported `fix` (a fix, or a no-fix epoch that only says how many satellites are heard).
    public mutating func fixReceived(_ fix: Fix, now: Duration, synchronisedTime: Date? = nil) -> [Action] {
        let usable = fix.quality.isUsable
        defer { if usable { counters.fixesSeen += 1 } else { counters.noFixEpochs += 1 } }
        // A receiver that cannot be switched off (no supply switch) keeps talking while "off".
        guard scheduler.isPowered else {
            if usable { counters.fixesUnwanted += 1 }
            return []
        }
        if usable, !freshness.isFresh(fix, arrivedAt: now) {
            counters.staleFixes += 1
            return [.note(.staleFix(fix, poweredOnAt: freshness.poweredOnAt))]
        }
        if usable, sessionFirstFixAt == nil { sessionFirstFixAt = now }
        // Its time is the receiver's solution (a usable fix, not the clock it kept while off), measured
        // after this power-on (fresh), on a date nothing contradicted, within the time sanity limits of
        // a synchronised system clock: first, before any power-off.
        let sane = timeSanity.rejection(of: fix, context: FilterContext(synchronisedTime: synchronisedTime), reference: nil) == nil
        let time: [Action] = usable && !fix.timeUntrusted && sane ? [.trustedTime(fix)] : []
        return time + perform(scheduler.handle(.fixReceived(fix, now: now)), now: now, synchronisedTime: synchronisedTime)
    }

    /// The wake-up the scheduler asked for came.
    public mutating func timerFired(now: Duration, synchronisedTime: Date? = nil) -> [Action] {
        counters.wakeUps += 1
        counters.nextWake = nil
        return perform(scheduler.handle(.timerFired(now: now)), now: now, synchronisedTime: synchronisedTime)
    }

    /// Switching the receiver's power failed: the scheduler goes on as if it had worked (the next
    /// switch tries again); the error is what `tern status` shows.
    public mutating func powerSwitchFailed(_ error: String) {
        counters.lastError = error
    }

    /// The receiver's power was switched as asked (a switch that failed is reported with `powerSwitchFailed`).
    public mutating func powerSwitched(on: Bool, now: Duration, synchronisedTime: Date? = nil) {
        if on {
            if poweredSince == nil {
                counters.powerCycles += 1
                sessionFirstFixAt = nil
                freshness.poweredOn(at: now, systemTime: synchronisedTime)
            }
            poweredSince = poweredSince ?? now
        } else if let since = poweredSince {
            counters.receiverOnSeconds += (now - since).seconds
            poweredSince = nil
        }
        counters.receiverPowered = on
    }

    public mutating func commitTimerFired(now: Duration) -> [Action] {
        commitActions(commits.timerFired(now: now))
    }

    /// A `.write` succeeded.
    public mutating func written(_ result: EnqueueResult, now: Duration) -> [Action] {
        counters.enqueued += result.stored
        counters.queueDrops = counters.queueDrops + result.dropped
        return commitActions(commits.written(now: now))
    }

    /// A `.write` failed (disk full, I/O error): the positions wait and are retried after a backoff.
    public mutating func writeFailed(_ error: String, now: Duration) -> [Action] {
        counters.lastError = error
        return commitActions(commits.writeFailed(now: now))
    }

    /// Shutting down, first step: the fix thinning holds is the track's last point so far, so it is
    /// kept; then everything waiting is written (call again while `pendingWrites` > 0 to retry).
    public mutating func shutdownWrites(now: Duration) -> [Action] {
        var out: [Action] = []
        // Its write may be due at once (a full or immediate window): that write is the shutdown's.
        for held in filter.flush() { out += commitActions(commits.accepted(Position(fix: held), now: now)) }
        return out + commitActions(commits.shutdown()) + [.commitWake(at: nil)]
    }

    /// Shutting down, last step: the receiver is switched off for good.
    public mutating func stop(now: Duration) -> [Action] {
        counters.nextWake = nil
        return perform(scheduler.handle(.stop), now: now, synchronisedTime: nil) + [.wake(at: nil)]
    }

    /// The counters with the receiver's on-time and the uptime up to `now`, and the scheduler's summary.
    public func status(now: Duration) -> GatewayStatus {
        var snapshot = counters
        if let poweredSince { snapshot.receiverOnSeconds += (now - poweredSince).seconds }
        snapshot.uptimeSeconds = now.seconds
        snapshot.scheduler = scheduler.summary(now: now)
        snapshot.pendingWrites = commits.pending.count
        return snapshot
    }

    /// The scheduler's actions as the shell's: wake-ups first, power changes in order, then each
    /// delivery's verdict (which may bring a power-off and a wake-up) and the writes it leads to.
    private mutating func perform(_ actions: [FixSchedulerAction], now: Duration, synchronisedTime: Date?) -> [Action] {
        var out: [Action] = []
        var deliveries: [Fix] = []
        for case let .wake(at) in actions {
            counters.nextWake = at
            out.append(.wake(at: at))
        }
        for action in actions {
            switch action {
            case .powerOn: out.append(.powerOn)
            case .powerOff: out.append(.powerOff)
            case let .deliver(fix): deliveries.append(fix)
            case let .invalidEvent(what): out.append(.note(.invalidSchedulerEvent(what)))
            case .wake: break
            }
        }
        counters.acquisitionTimeouts = scheduler.timeouts
        for fix in deliveries {
            // A thinned fix is the fix the scheduler asked for all the same: it is told it arrived.
            let (store, notes) = evaluate(fix, now: now, synchronisedTime: synchronisedTime)
            out += notes
            out += perform(scheduler.handle(.delivered(accepted: store != nil, now: now)), now: now, synchronisedTime: synchronisedTime)
            guard let store else { continue }
            for kept in store { out += commitActions(commits.accepted(Position(fix: kept), now: now)) }
            if memorySavedAt.map({ now - $0 >= memorySaveInterval }) ?? true, let memory = scheduler.memory(now: now) {
                memorySavedAt = now
                out.append(.saveMemory(memory))
            }
        }
        return out
    }

    /// Runs the filter on the fix the scheduler chose and counts the verdict: nil when rejected, else
    /// the fixes to store now (none when thinning holds or drops it).
    private mutating func evaluate(_ fix: Fix, now: Duration, synchronisedTime: Date?) -> ([Fix]?, [Action]) {
        let context = FilterContext(now: now, synchronisedTime: synchronisedTime, sessionAge: sessionFirstFixAt.map { now - $0 })
        let verdict = filter.evaluate(fix, context: context)
        for reason in verdict.thinned { counters.thinned[reason.kind, default: 0] += 1 }
        if let reason = verdict.rejection {
            counters.rejections[reason.kind, default: 0] += 1
            return (nil, [.note(.rejected(reason))])
        }
        var actions: [Action] = []
        if let n = verdict.reanchoredAfter {
            counters.reanchors += 1
            actions.append(.note(.reanchored(consistentFixes: n, fix: fix)))
        }
        counters.fixesAccepted += 1
        counters.lastAccepted = fix
        actions.append(.accepted(fix))
        return (verdict.store, actions)
    }

    private mutating func commitActions(_ actions: [GroupCommit.Action]) -> [Action] {
        defer { counters.pendingWrites = commits.pending.count }
        return actions.map { action in
            switch action {
            case let .write(positions): return .write(positions)
            case let .wake(at): return .commitWake(at: at)
            case let .dropped(count):
                counters.droppedUnwritten += count
                return .note(.dropped(count: count, waiting: commits.pending.count))
            }
        }
    }
}
