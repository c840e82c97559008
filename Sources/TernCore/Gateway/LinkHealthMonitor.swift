/// Judges an open receiver link from what arrives on it, as a pure state machine: silent (no byte
/// for a while although the receiver is powered) or wrong baud (mostly garbage, nothing valid).
///
/// Time is a `Duration` since the shell started. Feed events, perform the returned actions.
public struct LinkHealthMonitor: Sendable, Hashable {
    public struct Options: Sendable, Hashable {
        /// Silent after this long without a byte while powered (default 5 s; receivers talk every second).
        public var silenceTimeout: Duration
        /// The sliding window the wrong-baud rule looks at (default 3 s).
        public var window: Duration
        /// Wrong baud needs at least this many bytes in the window (default 200)…
        public var minimumBytes: Int
        /// …more than this fraction of them bad (default 0.5), and no valid sentence.
        public var badFraction: Double
        /// Bytes charged per bad-checksum line, which the framer counts as lines (default 60, a typical sentence).
        public var bytesPerChecksumError: Int

        public init(
            silenceTimeout: Duration = .seconds(5), window: Duration = .seconds(3), minimumBytes: Int = 200,
            badFraction: Double = 0.5, bytesPerChecksumError: Int = 60
        ) {
            self.silenceTimeout = silenceTimeout
            self.window = window
            self.minimumBytes = minimumBytes
            self.badFraction = badFraction
            self.bytesPerChecksumError = bytesPerChecksumError
        }
    }

    /// What one read brought, as counted by the framer.
    public struct Sample: Sendable, Hashable {
        public var bytes: Int
        public var garbageBytes: Int
        public var checksumErrors: Int
        public var validSentences: Int

        public init(bytes: Int, garbageBytes: Int = 0, checksumErrors: Int = 0, validSentences: Int = 0) {
            self.bytes = bytes
            self.garbageBytes = garbageBytes
            self.checksumErrors = checksumErrors
            self.validSentences = validSentences
        }
    }

    public enum Health: Sendable, Hashable {
        case healthy
        /// No byte since `since` although powered.
        case silent(since: Duration)
        case wrongBaudSuspected
    }

    public enum Event: Sendable, Hashable {
        case powerChanged(on: Bool, now: Duration)
        case received(Sample, now: Duration)
        /// The link was (re)opened: forget what came before, start timing silence afresh.
        case linkOpened(now: Duration)
        case timerFired(now: Duration)
    }

    public enum Action: Sendable, Hashable {
        /// Deliver `.timerFired` at this time (replaces any earlier request).
        case wake(at: Duration)
        /// The health changed.
        case report(Health)
    }

    public let options: Options
    public private(set) var health: Health = .healthy
    public private(set) var isPowered = false
    /// The last byte, power-on or link opening: silence counts from here.
    private var lastActivity: Duration = .zero
    private var samples: [TimedSample] = []
    private var pendingWake: Duration?

    private struct TimedSample: Sendable, Hashable {
        var time: Duration
        var sample: Sample
    }

    public init(options: Options = Options()) {
        self.options = options
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case let .powerChanged(on, now):
            guard on != isPowered else { return [] }
            isPowered = on
            restart(now: now)
            return evaluate(now: nil, fresh: true) + armTimer()
        case let .linkOpened(now):
            restart(now: now)
            return evaluate(now: nil, fresh: true) + armTimer()
        case let .received(sample, now):
            guard sample.bytes > 0 else { break }
            lastActivity = now
            samples.append(TimedSample(time: now, sample: sample))
            samples.removeAll { $0.time <= now - options.window }
        case let .timerFired(now):
            guard let due = pendingWake, now >= due else { return [] }
            pendingWake = nil
            return evaluate(now: now) + armTimer()
        }
        return evaluate(now: nil) + armTimer()
    }

    private mutating func restart(now: Duration) {
        lastActivity = now
        samples = []
    }

    /// The health now; silence is judged only on timer events (`now` non-nil). `fresh`: nothing
    /// from before counts (power or link restarted), so an old suspicion does not stand.
    private mutating func evaluate(now: Duration?, fresh: Bool = false) -> [Action] {
        let next: Health
        if isPowered, let now, now - lastActivity >= options.silenceTimeout {
            next = .silent(since: lastActivity)
        } else if let verdict = windowVerdict {
            next = verdict
        } else {
            // Too little to judge: a wrong-baud suspicion stands until a valid sentence clears it.
            next = health == .wrongBaudSuspected && !fresh ? .wrongBaudSuspected : .healthy
        }
        guard next != health else { return [] }
        health = next
        return [.report(next)]
    }

    /// What the window says: healthy with a valid sentence or enough mostly good bytes, wrong
    /// baud with enough mostly bad ones, nil with too few bytes to tell.
    private var windowVerdict: Health? {
        var bytes = 0
        var bad = 0
        for entry in samples {
            if entry.sample.validSentences > 0 { return .healthy }
            bytes += entry.sample.bytes
            bad += entry.sample.garbageBytes + entry.sample.checksumErrors * options.bytesPerChecksumError
        }
        guard bytes >= options.minimumBytes else { return nil }
        return Double(min(bad, bytes)) > options.badFraction * Double(bytes) ? .wrongBaudSuspected : .healthy
    }

    /// One timer at a time, while powered and not yet silent: at the moment silence would begin.
    private mutating func armTimer() -> [Action] {
        guard isPowered, pendingWake == nil else { return [] }
        if case .silent = health { return [] }
        let due = lastActivity + options.silenceTimeout
        pendingWake = due
        return [.wake(at: due)]
    }
}
