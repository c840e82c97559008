/// Whether the daemon's loops are making progress, for systemd's watchdog: the daemon pings only
/// while this says so, so a ping proves more than that the status task runs. Pure: one sample a
/// tick, time as a `Duration` since start.
///
/// Two loops are watched, each against a stall its own checks would have reported long before:
/// - **the reader**: while the receiver is meant to be on and its link counts as connected, bytes
///   must keep arriving; the link's own health monitor calls it silent after seconds, so bytes that
///   stop for `readerStall` with the link still "connected" mean the reading task is stuck;
/// - **the forwarder**: busy (uploading, acknowledging, quarantining) without finishing anything for
///   `forwarderStall`, beyond every request's own deadline, means it is wedged.
/// A receiver switched off, a link gone or silent, a forwarder idle, backing off or blocked: all
/// progress (they are waiting, as they should).
public struct ProgressWatch: Sendable, Hashable {
    public struct Sample: Sendable, Hashable {
        public var now: Duration
        /// The receiver is powered (the scheduler wants a fix), and its link is connected.
        public var receiverOn: Bool
        public var linkConnected: Bool
        /// Bytes read from the receiver since start.
        public var bytesRead: Int
        /// Whether the forwarder is in the middle of something (not idle, backing off or blocked).
        public var forwarderBusy: Bool
        /// The forwarder's state and a count that moves whenever it finishes something (batches sent,
        /// failed attempts, positions uploaded).
        public var forwarderState: String
        public var forwarderActivity: Int

        public init(
            now: Duration, receiverOn: Bool, linkConnected: Bool, bytesRead: Int, forwarderBusy: Bool, forwarderState: String,
            forwarderActivity: Int
        ) {
            self.now = now
            self.receiverOn = receiverOn
            self.linkConnected = linkConnected
            self.bytesRead = bytesRead
            self.forwarderBusy = forwarderBusy
            self.forwarderState = forwarderState
            self.forwarderActivity = forwarderActivity
        }
    }

    public let readerStall: Duration
    public let forwarderStall: Duration
    /// What each loop showed last, and since when unchanged.
    private struct Mark: Sendable, Hashable {
        var value: String
        var since: Duration
    }

    private var reader: Mark?
    private var forwarder: Mark?

    public init(readerStall: Duration, forwarderStall: Duration) {
        self.readerStall = readerStall
        self.forwarderStall = forwarderStall
    }

    /// nil while both loops make progress; else which one is stuck, and for how long.
    public mutating func check(_ sample: Sample) -> String? {
        let expectingBytes = sample.receiverOn && sample.linkConnected
        let readerMark = expectingBytes ? "\(sample.bytesRead)" : "not expected to read"
        if reader?.value != readerMark || !expectingBytes { reader = Mark(value: readerMark, since: sample.now) }
        let forwarderMark = "\(sample.forwarderState) #\(sample.forwarderActivity)"
        if forwarder?.value != forwarderMark || !sample.forwarderBusy { forwarder = Mark(value: forwarderMark, since: sample.now) }
        if let reader, expectingBytes, sample.now - reader.since >= readerStall {
            return "the receiver's reader has read nothing for \((sample.now - reader.since).components.seconds) s while the receiver is on and its link connected"
        }
        if let forwarder, sample.forwarderBusy, sample.now - forwarder.since >= forwarderStall {
            return "the forwarder has been \(sample.forwarderState) for \((sample.now - forwarder.since).components.seconds) s without finishing"
        }
        return nil
    }
}
