import Foundation
import Logging
import Synchronization
import TernCore

/// What the forwarder has done so far (for the status line and `tern status`).
public struct ForwarderStatus: Sendable, Hashable, Codable {
    /// Positions the server confirmed.
    public var uploaded = 0
    public var batchesSent = 0
    public var failedAttempts = 0
    public var lastError: String?
    /// Set while the server refuses our data for good (needs a human).
    public var blockedReason: String?
    public var state = "idle"
    /// When the server last confirmed positions (wall clock).
    public var lastSuccessAt: Date?
    /// Positions the server refused too often, moved to the quarantine.
    public var quarantined = 0
    /// Positions sent ahead of the backlog (live first), and the last of them.
    public var sentLiveFirst = 0
    public var lastLiveSequence: Int64?
    /// Failed upload attempts by class (`FailureClass` raw values), since start.
    public var failures: [String: Int] = [:]

    /// Why an upload attempt failed: worth retrying (network, 5xx, timeout), one record refused,
    /// the configuration refused (needs a human), or the queue could not be read.
    public enum FailureClass: String, Sendable, CaseIterable {
        case retryable, rejected, permanent, queue
    }

    public init() {}

    private enum CodingKeys: String, CodingKey {
        case uploaded, batchesSent, failedAttempts, lastError, blockedReason, state, lastSuccessAt, quarantined
        case sentLiveFirst, lastLiveSequence, failures
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uploaded = try container.decode(Int.self, forKey: .uploaded)
        batchesSent = try container.decode(Int.self, forKey: .batchesSent)
        failedAttempts = try container.decode(Int.self, forKey: .failedAttempts)
        lastError = try container.decodeIfPresent(String.self, forKey: .lastError)
        blockedReason = try container.decodeIfPresent(String.self, forKey: .blockedReason)
        state = try container.decode(String.self, forKey: .state)
        lastSuccessAt = try container.decodeIfPresent(Date.self, forKey: .lastSuccessAt)
        quarantined = try container.decode(Int.self, forKey: .quarantined)
        sentLiveFirst = try container.decode(Int.self, forKey: .sentLiveFirst)
        lastLiveSequence = try container.decodeIfPresent(Int64.self, forKey: .lastLiveSequence)
        // Absent in reports written before the failure classes.
        failures = try container.decodeIfPresent([String: Int].self, forKey: .failures) ?? [:]
    }
}

/// The async shell around `ForwarderStateMachine`: one loop takes events (new positions, upload
/// results, timers, connectivity), feeds them to the state machine and performs its actions
/// against the queue and the uplink.
public final class Forwarder<C: Clock>: Forwarding, Sendable where C.Duration == Duration {
    public typealias Status = ForwarderStatus

    private let queue: any PositionQueue
    private let uplink: any Uplink
    private let connectivity: (any Connectivity)?
    private let batchSize: Int
    /// Whether the newest position goes out ahead of a backlog (off where the server needs strict order).
    private let liveFirst: Bool
    private let clock: C
    private let start: C.Instant
    private let logger: Logger
    /// How long a stop waits for the exchange under way (within systemd's `TimeoutStopSec`), on
    /// `graceClock`: real time, also where `clock` is the simulated board's faster one.
    private let stopGrace: Duration
    private let graceClock: any Clock<Duration>
    private let timer: WakeTimer<C>
    private let inbox: AsyncStream<ForwarderStateMachine.Event>
    private let send: AsyncStream<ForwarderStateMachine.Event>.Continuation
    private let machine: Mutex<ForwarderStateMachine>
    private let current = Mutex(Status())

    public init(
        queue: any PositionQueue, uplink: any Uplink, connectivity: (any Connectivity)? = nil,
        backoff: Backoff = Backoff(), batchSize: Int = 100, maxRecordAttempts: Int = 5, liveFirst: Bool = false,
        seed: UInt64 = 0x7E54, stopGrace: Duration = .seconds(10), graceClock: any Clock<Duration> = ContinuousClock(),
        clock: C, logger: Logger = Logger(label: "tern.forwarder")
    ) {
        self.stopGrace = stopGrace
        self.graceClock = graceClock
        self.queue = queue
        self.uplink = uplink
        self.connectivity = connectivity
        self.batchSize = max(1, batchSize)
        self.clock = clock
        self.start = clock.now
        self.logger = logger
        self.timer = WakeTimer(clock: clock)
        self.machine = Mutex(ForwarderStateMachine(backoff: backoff, maxRecordAttempts: maxRecordAttempts, seed: seed))
        self.liveFirst = liveFirst
        (inbox, send) = AsyncStream.makeStream()
    }

    public func status() -> Status { current.withLock { $0 } }

    public func positionsAvailable() { send.yield(.positionsAvailable) }

    /// Runs until cancelled. Starts by uploading whatever an earlier run left in the queue. At the
    /// cancellation (a clean stop) an upload under way finishes and what the server confirmed is
    /// acknowledged, for at most `stopGrace`; nothing new starts.
    public func run() async {
        send.yield(.positionsAvailable)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [timer, send, start] in
                await timer.run { instant in send.yield(.timerFired(now: start.duration(to: instant))) }
            }
            if let connectivity {
                group.addTask { [send] in
                    for await event in connectivity.events() { send.yield(.connectivity(event)) }
                }
            }
            group.addTask {
                for await event in self.inbox {
                    if Task.isCancelled { break }
                    await self.performHeard(event)
                }
            }
            await group.next()
            group.cancelAll()
        }
        _ = handle(.stop)
    }

    /// Sends everything queued now, ignoring backoff, until the queue is empty, an upload or an
    /// acknowledgement fails, or `timeout` passes (checked before each batch): the state machine's
    /// drain, performed as every upload is. For a clean shutdown and for the demo's final flush; call
    /// after `run` ended. True when the queue was emptied.
    public func drain(timeout: Duration) async -> Bool {
        await perform(handle(.drain), deadline: clock.now.advanced(by: timeout)) ?? false
    }

    /// Performs an event's actions in a task of their own, so that a stop does not cut an exchange
    /// short: a batch the server stored as the service stopped would stay queued and go out again
    /// at the next start. The machine, told `.stop`, lets it finish and starts nothing new; past
    /// `stopGrace` the exchange is cancelled (its batch stays queued).
    private func performHeard(_ event: ForwarderStateMachine.Event) async {
        let work = Task { _ = await self.perform(self.handle(event)) }
        let grace = Mutex<Task<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await work.value
        } onCancel: { [graceClock, stopGrace] in
            _ = self.handle(.stop)
            grace.withLock {
                $0 = Task {
                    try? await graceClock.sleep(for: stopGrace)
                    work.cancel()
                }
            }
        }
        grace.withLock { $0?.cancel() }
    }

    private func handle(_ event: ForwarderStateMachine.Event) -> [ForwarderStateMachine.Action] {
        machine.withLock { sm in
            let actions = sm.handle(event)
            let state = "\(sm.state)"
            current.withLock { $0.state = state }
            return actions
        }
    }

    /// Performs the machine's actions and those they lead to; returns the drain's result when one
    /// ended (false when `deadline` passed before a batch).
    private func perform(_ initial: [ForwarderStateMachine.Action], deadline: C.Instant? = nil) async -> Bool? {
        var actions = initial[...]
        while let action = actions.popFirst() {
            switch action {
            case .uploadNextBatch:
                if let deadline, clock.now >= deadline {
                    _ = handle(.stop)
                    return false
                }
                let outcome = await uploadNextBatch()
                actions.append(contentsOf: handle(.uploadFinished(outcome, now: elapsed)))
            case let .acknowledge(through):
                do {
                    try await Task { [queue] in try await queue.acknowledge(through: through) }.value
                    actions.append(contentsOf: handle(.acknowledged(now: elapsed)))
                } catch {
                    // Retried with backoff; the batch is not sent again meanwhile.
                    current.withLock { $0.lastError = "cannot acknowledge uploaded positions: \(error)" }
                    logger.error("cannot remove uploaded positions from the queue; retrying with backoff", metadata: ["error": "\(error)"])
                    actions.append(contentsOf: handle(.acknowledgeFailed(reason: "\(error)", now: elapsed)))
                }
            case let .quarantine(sequence, reason):
                do {
                    try await Task { [queue] in try await queue.quarantine(sequence: sequence, reason: reason) }.value
                    current.withLock { $0.quarantined += 1 }
                    logger.error(
                        "the server refused a position \(machine.withLock { $0.maxRecordAttempts }) times: moved it to the quarantine (tern queue export --quarantine); the uploads go on",
                        metadata: ["sequence": "\(sequence)", "reason": "\(reason)"])
                    actions.append(contentsOf: handle(.quarantined))
                } catch {
                    actions.append(contentsOf: handle(.quarantineFailed(reason: "\(error)", now: elapsed)))
                }
            case let .wake(at):
                timer.schedule(at: start.advanced(by: at))
            case let .reportBlocked(reason):
                current.withLock { $0.blockedReason = reason }
                logger.error("server refuses positions; they stay queued", metadata: ["reason": "\(reason)"])
            case let .invalidEvent(what):
                logger.error("programming error, please report it: the uploader ignored an event its state cannot meet", metadata: ["event": "\(what)"])
            case let .drainFinished(emptied):
                return emptied
            }
        }
        return nil
    }

    private func uploadNextBatch() async -> ForwarderStateMachine.Outcome {
        let batch: [QueuedPosition]
        do {
            batch = try await queue.oldest(limit: batchSize)
        } catch {
            current.withLock {
                $0.lastError = "\(error)"
                $0.failures[ForwarderStatus.FailureClass.queue.rawValue, default: 0] += 1
            }
            return .retryable(reason: "cannot read queue: \(error)")
        }
        guard let last = batch.last else { return .nothingToSend }
        await sendNewestFirst(behind: last.sequence)
        let result = await uplink.send(batch)
        current.withLock { status in
            status.uploaded += Self.deliveredCount(result, batch)
            if Self.deliveredCount(result, batch) > 0 { status.lastSuccessAt = Date() }
            if result == .delivered {
                status.batchesSent += 1
                status.blockedReason = nil
            } else {
                status.failedAttempts += 1
            }
            if let failure = Self.failureClass(result) { status.failures[failure.rawValue, default: 0] += 1 }
            if let reason = Self.failure(result) { status.lastError = reason }
        }
        if let reason = Self.failure(result) { logger.info("upload failed", metadata: ["reason": "\(reason)"]) }
        return Self.outcome(result, last: last.sequence)
    }

    /// Live first: when the newest position waits behind a backlog, it goes out on its own before the
    /// next backlog batch (once; on failure it simply waits its turn in order).
    private func sendNewestFirst(behind lastOfBatch: Int64) async {
        guard liveFirst, let newest = try? await queue.newest(), newest.sequence > lastOfBatch,
              current.withLock({ $0.lastLiveSequence ?? 0 }) < newest.sequence
        else { return }
        current.withLock { $0.lastLiveSequence = newest.sequence }
        guard await uplink.send([newest]) == .delivered else { return }
        try? await queue.remove(sequence: newest.sequence)
        current.withLock {
            $0.uploaded += 1
            $0.sentLiveFirst += 1
        }
    }

    /// The state machine's view of an uplink result for a batch ending at `last`.
    static func outcome(_ result: UplinkResult, last: Int64) -> ForwarderStateMachine.Outcome {
        switch result {
        case .delivered: .delivered(lastSequence: last)
        case let .partial(through, rest): .partial(through: through, rest: outcome(rest, last: last))
        case let .retryable(reason, after): .retryable(reason: reason, after: after)
        case let .rejected(sequence, reason): .rejected(sequence: sequence, reason: reason)
        case let .permanent(reason): .permanent(reason: reason)
        }
    }

    private static func deliveredCount(_ result: UplinkResult, _ batch: [QueuedPosition]) -> Int {
        switch result {
        case .delivered: batch.count
        case let .partial(through, _): batch.count { $0.sequence <= through }
        default: 0
        }
    }

    private static func failureClass(_ result: UplinkResult) -> ForwarderStatus.FailureClass? {
        switch result {
        case .delivered: nil
        case let .partial(_, rest): failureClass(rest)
        case .retryable: .retryable
        case .rejected: .rejected
        case .permanent: .permanent
        }
    }

    private static func failure(_ result: UplinkResult) -> String? {
        switch result {
        case .delivered: nil
        case let .partial(_, rest): failure(rest)
        case let .retryable(reason, _), let .rejected(_, reason), let .permanent(reason): reason
        }
    }

    private var elapsed: Duration { start.duration(to: clock.now) }
}
