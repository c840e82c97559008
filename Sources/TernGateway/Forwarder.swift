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

    public init() {}
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
    private let clock: C
    private let start: C.Instant
    private let logger: Logger
    private let timer: WakeTimer<C>
    private let inbox: AsyncStream<ForwarderStateMachine.Event>
    private let send: AsyncStream<ForwarderStateMachine.Event>.Continuation
    private let machine: Mutex<ForwarderStateMachine>
    private let current = Mutex(Status())

    public init(
        queue: any PositionQueue, uplink: any Uplink, connectivity: (any Connectivity)? = nil,
        backoff: Backoff = Backoff(), batchSize: Int = 100, seed: UInt64 = 0x7E54, clock: C,
        logger: Logger = Logger(label: "tern.forwarder")
    ) {
        self.queue = queue
        self.uplink = uplink
        self.connectivity = connectivity
        self.batchSize = max(1, batchSize)
        self.clock = clock
        self.start = clock.now
        self.logger = logger
        self.timer = WakeTimer(clock: clock)
        self.machine = Mutex(ForwarderStateMachine(backoff: backoff, seed: seed))
        (inbox, send) = AsyncStream.makeStream()
    }

    public func status() -> Status { current.withLock { $0 } }

    public func positionsAvailable() { send.yield(.positionsAvailable) }

    /// Runs until cancelled. Starts by uploading whatever an earlier run left in the queue.
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
                    await self.perform(self.handle(event))
                }
            }
            await group.next()
            group.cancelAll()
        }
        _ = handle(.stop)
    }

    /// Sends everything queued now, ignoring backoff, until the queue is empty, the uplink fails,
    /// or `timeout` passes. For a clean shutdown and for the demo's final flush; call after `run` ended.
    public func drain(timeout: Duration) async -> Bool {
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            guard let batch = try? await queue.oldest(limit: batchSize) else { return false }
            guard let last = batch.last else { return true }
            guard await uplink.send(batch) == .delivered else { return false }
            try? await queue.acknowledge(through: last.sequence)
            current.withLock {
                $0.uploaded += batch.count
                $0.batchesSent += 1
            }
        }
        return false
    }

    private func handle(_ event: ForwarderStateMachine.Event) -> [ForwarderStateMachine.Action] {
        machine.withLock { sm in
            let actions = sm.handle(event)
            let state = "\(sm.state)"
            current.withLock { $0.state = state }
            return actions
        }
    }

    private func perform(_ initial: [ForwarderStateMachine.Action]) async {
        var actions = initial[...]
        while let action = actions.popFirst() {
            switch action {
            case .uploadNextBatch:
                let outcome = await uploadNextBatch()
                actions.append(contentsOf: handle(.uploadFinished(outcome, now: elapsed)))
            case let .acknowledge(through):
                do {
                    try await Task { [queue] in try await queue.acknowledge(through: through) }.value
                    actions.append(contentsOf: handle(.acknowledged))
                } catch {
                    // Retried with backoff; the batch is not sent again meanwhile.
                    current.withLock { $0.lastError = "cannot acknowledge uploaded positions: \(error)" }
                    logger.error("cannot remove uploaded positions from the queue; retrying with backoff", metadata: ["error": "\(error)"])
                    actions.append(contentsOf: handle(.acknowledgeFailed(reason: "\(error)", now: elapsed)))
                }
            case let .wake(at):
                timer.schedule(at: start.advanced(by: at))
            case let .reportBlocked(reason):
                current.withLock { $0.blockedReason = reason }
                logger.error("server refuses positions; they stay queued", metadata: ["reason": "\(reason)"])
            }
        }
    }

    private func uploadNextBatch() async -> ForwarderStateMachine.Outcome {
        let batch: [QueuedPosition]
        do {
            batch = try await queue.oldest(limit: batchSize)
        } catch {
            current.withLock { $0.lastError = "\(error)" }
            return .retryable(reason: "cannot read queue: \(error)")
        }
        guard let last = batch.last else { return .nothingToSend }
        let result = await uplink.send(batch)
        current.withLock { status in
            switch result {
            case .delivered:
                status.uploaded += batch.count
                status.batchesSent += 1
                status.blockedReason = nil
            case let .partial(through, _):
                status.uploaded += batch.count { $0.sequence <= through }
                status.failedAttempts += 1
            case let .retryable(reason, _), let .permanent(reason), let .rejected(_, reason):
                status.failedAttempts += 1
                status.lastError = reason
            }
        }
        switch result {
        case .delivered: return .delivered(lastSequence: last.sequence)
        case let .partial(through, _): return .delivered(lastSequence: through)
        case let .retryable(reason, _), let .rejected(_, reason):
            logger.info("upload failed, will retry", metadata: ["reason": "\(reason)"])
            return .retryable(reason: reason)
        case let .permanent(reason): return .permanent(reason: reason)
        }
    }

    private var elapsed: Duration { start.duration(to: clock.now) }
}
