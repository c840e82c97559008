/// Store-and-forward upload logic as a pure state machine: one batch in flight at a time,
/// acknowledge only what the server confirmed, exponential backoff with jitter on failure (never
/// sooner than the server's `Retry-After`), retry at once when connectivity may be back.
///
/// Every outcome has a defined path: a confirmed prefix is acknowledged before the rest is dealt
/// with; a record the server refuses is retried with backoff and quarantined after
/// `maxRecordAttempts`, so it never blocks the queue; while connectivity says the network is gone,
/// retries wait the longest backoff; a refusal of the configuration (authentication,
/// unknown device) blocks the uplink until a human fixes it, retried every `backoff.maximum`; an
/// acknowledgement that fails (the disk) is retried with backoff, never by sending the batch again.
/// Nothing is ever dropped here.
public struct ForwarderStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// A batch is being read and sent; `more` records a wake-up that arrived meanwhile.
        case uploading(more: Bool)
        /// The server confirmed positions up to `through`; they are being removed from the queue, then
        /// `then` (what happened to the rest of the batch) is dealt with.
        case acknowledging(through: Int64, then: Outcome?)
        /// Removing confirmed positions failed `attempt` times in a row; tried again at `until`.
        case retryingAcknowledge(through: Int64, then: Outcome?, attempt: Int, until: Duration)
        /// A refused record is being moved to the quarantine.
        case quarantining(sequence: Int64)
        /// Waiting after `attempt` consecutive failures until `until`.
        case backingOff(attempt: Int, until: Duration)
        /// The server refuses the configuration; retried rarely until a human fixes it.
        case blocked(reason: String, until: Duration)
        case stopped
        /// Stopped with an exchange in flight: it finishes and is heard (what the server confirmed is
        /// removed from the queue, so a clean stop sends nothing twice), then `.stopped`; nothing new starts.
        case stopping(awaiting: Exchange)
        /// Draining (a clean shutdown, the demo's end): batch after batch, no backoff, until the
        /// queue is empty or an upload or acknowledgement fails.
        case drainUploading
        case drainAcknowledging(through: Int64, then: Outcome?)
        /// The drain ended: with the queue empty, or at a failure (what is left stays queued).
        case drained(emptied: Bool)
    }

    /// What a stop found in flight.
    public enum Exchange: Sendable, Hashable {
        case upload
        case acknowledgement
        case quarantine
    }

    public indirect enum Outcome: Sendable, Hashable {
        /// The server confirmed every position up to and including `lastSequence`.
        case delivered(lastSequence: Int64)
        /// The server confirmed the positions up to `through`; the rest of the batch ended as `rest`.
        case partial(through: Int64, rest: Outcome)
        /// The queue was empty.
        case nothingToSend
        case retryable(reason: String, after: Duration? = nil)
        /// The server refuses one record.
        case rejected(sequence: Int64, reason: String)
        case permanent(reason: String)
    }

    public enum Event: Sendable, Hashable {
        case positionsAvailable
        case uploadFinished(Outcome, now: Duration)
        case timerFired(now: Duration)
        case connectivity(ConnectivityEvent)
        /// The confirmed positions were removed from the queue.
        case acknowledged(now: Duration)
        case acknowledgeFailed(reason: String, now: Duration)
        /// The refused record was moved to the quarantine.
        case quarantined
        case quarantineFailed(reason: String, now: Duration)
        /// The run ends: an exchange in flight finishes (`.stopping`), nothing new starts.
        case stop
        /// Send everything queued now, ignoring backoff (after the run ended, nothing in flight).
        case drain
    }

    public enum Action: Sendable, Hashable {
        /// Read the oldest batch and send it, then report `.uploadFinished`.
        case uploadNextBatch
        /// Remove the confirmed positions from the queue (before the next upload), then report
        /// `.acknowledged` or `.acknowledgeFailed`.
        case acknowledge(through: Int64)
        /// Move a record the server refused `maxRecordAttempts` times out of the queue, keeping it
        /// (`.quarantined` or `.quarantineFailed`).
        case quarantine(sequence: Int64, reason: String)
        case wake(at: Duration)
        /// Tell someone: the reason the server refuses our data.
        case reportBlocked(reason: String)
        /// The drain ended: `emptied` when the queue is empty, false at the first failure.
        case drainFinished(emptied: Bool)
        /// An event the state could not meet (a programming error in the shell or the machine):
        /// nothing changed; log it.
        case invalidEvent(String)
    }

    public let backoff: Backoff
    /// Attempts at a record the server refuses before it is quarantined.
    public let maxRecordAttempts: Int
    /// The longest wait a server's `Retry-After` can impose.
    public static let maxRetryAfter = Duration.seconds(3600)
    public private(set) var state: State = .idle
    private var random: SplitMix64
    /// Consecutive failures so far; carried across uploads until one succeeds.
    public private(set) var failures = 0
    /// The record the server refused last, and how many times in a row.
    public struct Refusal: Sendable, Hashable {
        public var sequence: Int64
        public var attempts: Int

        public init(sequence: Int64, attempts: Int) {
            self.sequence = sequence
            self.attempts = attempts
        }
    }

    public private(set) var refused: Refusal?
    /// Whether connectivity says the network is gone: retries then wait the longest backoff (a radio
    /// need not wake for nothing); the network coming back retries at once.
    public private(set) var offline = false

    public init(backoff: Backoff = Backoff(), maxRecordAttempts: Int = 5, seed: UInt64 = 0x7E54) {
        self.backoff = backoff
        self.maxRecordAttempts = max(1, maxRecordAttempts)
        self.random = SplitMix64(seed: seed)
    }

    /// Events the state could not meet (each also returned as `.invalidEvent`).
    public private(set) var invalidEvents = 0

    public mutating func handle(_ event: Event) -> [Action] {
        if case let .connectivity(change) = event { offline = change == .offline }
        if case .drain = event { return drain() }
        switch state {
        case .stopped, .drained: return []  // after the run or the drain: late timers and signals change nothing
        case let .stopping(awaiting): return stopping(awaiting: awaiting, event)
        case .idle, .uploading, .acknowledging, .retryingAcknowledge, .quarantining, .backingOff, .blocked, .drainUploading,
             .drainAcknowledging:
            break
        }
        switch event {
        case .stop:
            return stop()
        case .drain:
            return drain()
        case .positionsAvailable:
            return positionsAvailable()
        case let .uploadFinished(outcome, now):
            if case .drainUploading = state { return drained(outcome) }
            guard case let .uploading(more) = state else { return invalid(event) }
            return finished(outcome, more: more, now: now)
        case let .timerFired(now):
            return timerFired(now: now)
        case let .connectivity(change):
            return connectivity(change)
        case let .acknowledged(now):
            if case let .drainAcknowledging(_, then) = state {
                guard let then else {
                    state = .drainUploading
                    return [.uploadNextBatch]
                }
                return drained(then)
            }
            guard case let .acknowledging(_, then) = state else { return invalid(event) }
            failures = 0
            state = .uploading(more: false)
            guard let then else { return [.uploadNextBatch] }
            return finished(then, more: false, now: now)
        case let .acknowledgeFailed(_, now):
            if case .drainAcknowledging = state { return endDrain(emptied: false) }
            guard case let .acknowledging(through, then) = state else { return invalid(event) }
            failures += 1
            let until = now + backoff.delay(attempt: failures, unitRandom: random.nextUnit())
            state = .retryingAcknowledge(through: through, then: then, attempt: failures, until: until)
            return [.wake(at: until)]
        case .quarantined:
            guard case .quarantining = state else { return invalid(event) }
            refused = nil
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case let .quarantineFailed(_, now):
            guard case .quarantining = state else { return invalid(event) }
            return backOff(now: now, after: nil)
        }
    }

    /// New positions: an upload starts when none is under way; otherwise the one under way (or the
    /// wait) picks them up, since every upload reads the oldest batch afresh.
    private mutating func positionsAvailable() -> [Action] {
        switch state {
        case .idle:
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case .uploading:
            state = .uploading(more: true)
            return []
        case .acknowledging, .retryingAcknowledge, .quarantining, .backingOff, .blocked, .stopped, .stopping:
            return []
        case .drainUploading, .drainAcknowledging, .drained:
            return []  // each batch of the drain reads the queue afresh
        }
    }

    /// The shell drains after its run ended: from any state with nothing in flight.
    private mutating func drain() -> [Action] {
        switch state {
        case .idle, .stopped, .drained, .backingOff, .blocked:
            state = .drainUploading
            return [.uploadNextBatch]
        case .uploading, .acknowledging, .retryingAcknowledge, .quarantining, .stopping, .drainUploading, .drainAcknowledging:
            return invalid(.drain)
        }
    }

    /// The run ends. An upload, acknowledgement or quarantine under way finishes and is heard: a
    /// batch the server stored while the service stopped would otherwise stay queued and be sent
    /// again at the next start. A wait (backoff, a retried acknowledgement) simply ends.
    private mutating func stop() -> [Action] {
        switch state {
        case .uploading: state = .stopping(awaiting: .upload)
        case .acknowledging: state = .stopping(awaiting: .acknowledgement)
        case .quarantining: state = .stopping(awaiting: .quarantine)
        case .idle, .retryingAcknowledge, .backingOff, .blocked, .drainUploading, .drainAcknowledging, .stopped, .stopping, .drained:
            state = .stopped
        }
        return []
    }

    /// Stopping: the exchange in flight reports; a confirmed batch is acknowledged, then the machine stops.
    private mutating func stopping(awaiting: Exchange, _ event: Event) -> [Action] {
        switch (awaiting, event) {
        case let (.upload, .uploadFinished(outcome, _)):
            switch outcome {
            case let .delivered(through), let .partial(through, _):
                state = .stopping(awaiting: .acknowledgement)
                return [.acknowledge(through: through)]
            case .nothingToSend, .retryable, .rejected, .permanent:
                state = .stopped
                return []
            }
        case (.acknowledgement, .acknowledged), (.acknowledgement, .acknowledgeFailed),
             (.quarantine, .quarantined), (.quarantine, .quarantineFailed):
            state = .stopped
            return []
        case (_, .positionsAvailable), (_, .timerFired), (_, .connectivity), (_, .stop):
            return []  // nothing new starts
        case (.upload, .acknowledged), (.upload, .acknowledgeFailed), (.upload, .quarantined), (.upload, .quarantineFailed),
             (.acknowledgement, .uploadFinished), (.acknowledgement, .quarantined), (.acknowledgement, .quarantineFailed),
             (.quarantine, .uploadFinished), (.quarantine, .acknowledged), (.quarantine, .acknowledgeFailed),
             (_, .drain):
            return invalid(event)
        }
    }

    /// What an upload's outcome leads to while draining: acknowledge and go on, or end.
    private mutating func drained(_ outcome: Outcome) -> [Action] {
        switch outcome {
        case let .delivered(last):
            failures = 0
            state = .drainAcknowledging(through: last, then: nil)
            return [.acknowledge(through: last)]
        case let .partial(through, rest):
            state = .drainAcknowledging(through: through, then: rest)
            return [.acknowledge(through: through)]
        case .nothingToSend:
            return endDrain(emptied: true)
        case .retryable, .rejected, .permanent:
            return endDrain(emptied: false)
        }
    }

    private mutating func endDrain(emptied: Bool) -> [Action] {
        state = .drained(emptied: emptied)
        return [.drainFinished(emptied: emptied)]
    }

    /// A wake-up: the wait it was asked for ends; an early one, or one outlived by its state (the
    /// network came back first), does nothing.
    private mutating func timerFired(now: Duration) -> [Action] {
        switch state {
        case let .retryingAcknowledge(through, then, _, until):
            guard now >= until else { return [] }
            state = .acknowledging(through: through, then: then)
            return [.acknowledge(through: through)]
        case let .backingOff(_, until), let .blocked(_, until):
            guard now >= until else { return [] }
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case .idle, .uploading, .acknowledging, .quarantining, .stopped, .stopping, .drainUploading, .drainAcknowledging, .drained:
            return []
        }
    }

    /// The network may be back: a wait ends at once; anything else goes on (`offline` is noted above).
    private mutating func connectivity(_ change: ConnectivityEvent) -> [Action] {
        switch (state, change) {
        case (.backingOff, .mayBeOnline), (.blocked, .mayBeOnline):
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case (.backingOff, .offline), (.blocked, .offline),
             (.idle, _), (.uploading, _), (.acknowledging, _), (.retryingAcknowledge, _), (.quarantining, _), (.stopped, _), (.stopping, _),
             (.drainUploading, _), (.drainAcknowledging, _), (.drained, _):
            return []
        }
    }

    private mutating func invalid(_ event: Event) -> [Action] {
        invalidEvents += 1
        return [.invalidEvent("ForwarderStateMachine: \(event) in state \(state)")]
    }

    /// What an upload's outcome leads to, from `.uploading`.
    private mutating func finished(_ outcome: Outcome, more: Bool, now: Duration) -> [Action] {
        switch outcome {
        case let .delivered(last):
            failures = 0
            if let refused, refused.sequence <= last { self.refused = nil }
            state = .acknowledging(through: last, then: nil)
            return [.acknowledge(through: last)]
        case let .partial(through, rest):
            if let refused, refused.sequence <= through { self.refused = nil }
            state = .acknowledging(through: through, then: rest)
            return [.acknowledge(through: through)]
        case .nothingToSend:
            state = more ? .uploading(more: false) : .idle
            return more ? [.uploadNextBatch] : []
        case let .retryable(_, after):
            return backOff(now: now, after: after)
        case let .rejected(sequence, reason):
            let attempts = refused?.sequence == sequence ? (refused?.attempts ?? 0) + 1 : 1
            refused = Refusal(sequence: sequence, attempts: attempts)
            guard attempts >= maxRecordAttempts else { return backOff(now: now, after: nil) }
            state = .quarantining(sequence: sequence)
            return [.quarantine(sequence: sequence, reason: reason)]
        case let .permanent(reason):
            let until = now + backoff.maximum
            state = .blocked(reason: reason, until: until)
            return [.reportBlocked(reason: reason), .wake(at: until)]
        }
    }

    private mutating func backOff(now: Duration, after: Duration?) -> [Action] {
        failures += 1
        let delay = offline ? backoff.maximum : backoff.delay(attempt: failures, unitRandom: random.nextUnit())
        let until = now + max(delay, min(after ?? .zero, Self.maxRetryAfter))
        state = .backingOff(attempt: failures, until: until)
        return [.wake(at: until)]
    }
}
