/// Store-and-forward upload logic as a pure state machine: one batch in flight at a time,
/// acknowledge only what the server confirmed, exponential backoff with jitter on failure,
/// retry at once when connectivity may be back. An acknowledgement that fails (the disk) is retried
/// with the same backoff, never by sending the batch again. Nothing is ever dropped here.
public struct ForwarderStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case idle
        /// A batch is being read and sent; `more` records a wake-up that arrived meanwhile.
        case uploading(more: Bool)
        /// The server confirmed a batch; its positions are being removed from the queue.
        case acknowledging(through: Int64)
        /// Removing confirmed positions failed `attempt` times in a row; tried again at `until`.
        case retryingAcknowledge(through: Int64, attempt: Int, until: Duration)
        /// Waiting after `attempt` consecutive failures until `until`.
        case backingOff(attempt: Int, until: Duration)
        /// The server rejected a batch for good; retried rarely until a human fixes it.
        case blocked(reason: String, until: Duration)
        case stopped
    }

    public enum Outcome: Sendable, Hashable {
        /// The server confirmed every position up to and including `lastSequence`.
        case delivered(lastSequence: Int64)
        /// The queue was empty.
        case nothingToSend
        case retryable(reason: String)
        case permanent(reason: String)
    }

    public enum Event: Sendable, Hashable {
        case positionsAvailable
        case uploadFinished(Outcome, now: Duration)
        case timerFired(now: Duration)
        case connectivity(ConnectivityEvent)
        /// The confirmed positions were removed from the queue.
        case acknowledged
        case acknowledgeFailed(reason: String, now: Duration)
        case stop
    }

    public enum Action: Sendable, Hashable {
        /// Read the oldest batch and send it, then report `.uploadFinished`.
        case uploadNextBatch
        /// Remove the confirmed positions from the queue (before the next upload), then report
        /// `.acknowledged` or `.acknowledgeFailed`.
        case acknowledge(through: Int64)
        case wake(at: Duration)
        /// Tell someone: the reason the server refuses our data.
        case reportBlocked(reason: String)
    }

    public let backoff: Backoff
    public private(set) var state: State = .idle
    private var random: SplitMix64

    public init(backoff: Backoff = Backoff(), seed: UInt64 = 0x7E54) {
        self.backoff = backoff
        self.random = SplitMix64(seed: seed)
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.stopped, _):
            return []
        case (_, .stop):
            state = .stopped
            return []

        case (.idle, .positionsAvailable):
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case (.uploading, .positionsAvailable):
            state = .uploading(more: true)
            return []

        case let (.uploading, .uploadFinished(.delivered(last), _)):
            failures = 0
            state = .acknowledging(through: last)
            return [.acknowledge(through: last)]
        case (.acknowledging, .acknowledged):
            failures = 0
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case let (.acknowledging(through), .acknowledgeFailed(_, now)):
            failures += 1
            let until = now + backoff.delay(attempt: failures, unitRandom: random.nextUnit())
            state = .retryingAcknowledge(through: through, attempt: failures, until: until)
            return [.wake(at: until)]
        case let (.retryingAcknowledge(through, _, until), .timerFired(now)) where now >= until:
            state = .acknowledging(through: through)
            return [.acknowledge(through: through)]
        case let (.uploading(more), .uploadFinished(.nothingToSend, _)):
            state = more ? .uploading(more: false) : .idle
            return more ? [.uploadNextBatch] : []
        case let (.uploading, .uploadFinished(.retryable, now)):
            return backOff(now: now)
        case let (.uploading, .uploadFinished(.permanent(reason), now)):
            let until = now + backoff.maximum
            state = .blocked(reason: reason, until: until)
            return [.reportBlocked(reason: reason), .wake(at: until)]

        case let (.backingOff(_, until), .timerFired(now)) where now >= until,
             let (.blocked(_, until), .timerFired(now)) where now >= until:
            state = .uploading(more: false)
            return [.uploadNextBatch]
        case (.backingOff, .connectivity(.mayBeOnline)), (.blocked, .connectivity(.mayBeOnline)):
            state = .uploading(more: false)
            return [.uploadNextBatch]

        default:
            return []
        }
    }

    /// Consecutive failures so far; carried across uploads until one succeeds.
    public private(set) var failures = 0

    private mutating func backOff(now: Duration) -> [Action] {
        failures += 1
        let until = now + backoff.delay(attempt: failures, unitRandom: random.nextUnit())
        state = .backingOff(attempt: failures, until: until)
        return [.wake(at: until)]
    }
}
