import Foundation
import TernCore

/// Counters kept by `NMEAFixAssembler`.
public struct NMEAFixAssemblerStats: Sendable, Hashable {
    /// Receiver cycles seen (groups of sentences sharing a time of day).
    public var epochs = 0
    public var fixesEmitted = 0
    /// Epochs the receiver itself marked invalid (RMC/GLL status `V`, mode `N`, GGA quality 0,
    /// GSA "no fix") or without position.
    public var invalidEpochs = 0
    /// Invalid epochs reported as a no-fix `Fix` (`reportsNoFixEpochs`).
    public var noFixEpochsReported = 0
    /// Valid epochs dropped because no date was known yet (no RMC or ZDA so far).
    public var undatedEpochs = 0
    /// Fixes whose date a synchronised clock contradicts (no week-rollover candidate fits): emitted
    /// with `Fix.timeUntrusted` set.
    public var untrustedTimeFixes = 0
    /// Time-less sentences (GSA, GSV, VTG, ...) that arrived before any epoch and were dropped.
    public var orphanSentences = 0
    /// Epochs completed the moment their learnt last sentence arrived (`NMEACycleEndLearner`).
    public var completedAtCycleEnd = 0
    /// Epochs completed because the line went quiet (`lineQuiet()`).
    public var completedWhenQuiet = 0
    /// Open epochs thrown away (`discardOpenEpoch()`: the receiver was powered off or on, reconnected).
    public var discardedEpochs = 0
    /// Sentences of an epoch already completed (its time, after it was completed early), dropped; and
    /// how many of them followed a completion by a quiet line (the quiet gap is too short).
    public var lateSentences = 0
    public var lateAfterQuiet = 0
    /// Time-less sentences after the learnt end of a cycle and before the next time, dropped (the
    /// epoch was already out; a receiver that adds a GSA every few cycles after its usual last sentence).
    public var trailingSentences = 0
    /// Completed epochs reopened by a late or trailing sentence and emitted again with it
    /// (`amendsCompletedEpochs`).
    public var amendedEpochs = 0

    public init() {}

    /// Field by field: counts over several assemblers, and what one piece of input added.
    public static func + (lhs: Self, rhs: Self) -> Self { lhs.combined(with: rhs, +) }
    public static func - (lhs: Self, rhs: Self) -> Self { lhs.combined(with: rhs, -) }

    /// The one list of the counters.
    private func combined(with other: Self, _ op: (Int, Int) -> Int) -> Self {
        var result = Self()
        result.epochs = op(epochs, other.epochs)
        result.fixesEmitted = op(fixesEmitted, other.fixesEmitted)
        result.invalidEpochs = op(invalidEpochs, other.invalidEpochs)
        result.noFixEpochsReported = op(noFixEpochsReported, other.noFixEpochsReported)
        result.undatedEpochs = op(undatedEpochs, other.undatedEpochs)
        result.untrustedTimeFixes = op(untrustedTimeFixes, other.untrustedTimeFixes)
        result.orphanSentences = op(orphanSentences, other.orphanSentences)
        result.completedAtCycleEnd = op(completedAtCycleEnd, other.completedAtCycleEnd)
        result.completedWhenQuiet = op(completedWhenQuiet, other.completedWhenQuiet)
        result.discardedEpochs = op(discardedEpochs, other.discardedEpochs)
        result.lateSentences = op(lateSentences, other.lateSentences)
        result.lateAfterQuiet = op(lateAfterQuiet, other.lateAfterQuiet)
        result.trailingSentences = op(trailingSentences, other.trailingSentences)
        result.amendedEpochs = op(amendedEpochs, other.amendedEpochs)
        return result
    }
}

/// Groups decoded sentences into receiver cycles and turns each valid cycle into one `Fix`.
///
/// Sentences with the same UTC time of day (GGA, RMC, GNS, GLL, ZDA, GST; less than 10 ms apart, as
/// gpsd judges it; the epoch takes the latest one's time) form one epoch; the time-less ones (GSA, GSV, VTG, and GLL of NMEA 1.x receivers) join the current epoch. An epoch
/// is complete, whichever comes first:
/// - when the sentence that ends this receiver's cycles arrives, once learnt (`NMEACycleEndLearner`);
/// - when the line goes quiet (`lineQuiet()`, called by a live reader after a gap with no byte);
/// - when a sentence with another time arrives, or on `flush()` (end of input).
///
/// A sentence with the time of an epoch already completed that way is late: dropped and counted
/// (and the learnt end forgotten, if it completed the epoch). Time-less sentences after a learnt end
/// are stragglers of that cycle, dropped and counted; after a quiet line they open the next epoch.
/// `discardOpenEpoch()` throws the open epoch away (power changes: it would be a leftover of the
/// previous power cycle). Like gpsd:
/// - the date comes from RMC or ZDA and is kept for later epochs, advancing a day when the hour
///   goes backwards (midnight); no fix is emitted before the first date; a date a synchronised clock
///   contradicts (`NMEADateResolution.trusted`) marks the fix `timeUntrusted`;
/// - the epoch is invalid when the receiver says so: RMC/GLL status `V` or mode `N`, GGA quality 0,
///   GNS modes all `N`, GSA mode 1; DOPs of 99.99 or more mean "unknown";
/// - the 2D/3D mode is the GSA's; without GSA, 3D when GGA/GNS gives an altitude, else 2D.
///
/// Accuracy (1 σ, metres): with a GST in the epoch, `sqrt(σlat² + σlon²)` (the receiver's
/// horizontal RMS error, DRMS); otherwise `HDOP × uere`.
public struct NMEAFixAssembler: Sendable {
    /// User equivalent range error, metres: the assumed 1 σ ranging error of a consumer-grade
    /// single-frequency receiver. An assumption, not a measurement: `accuracy = HDOP × UERE`.
    public static let defaultUERE = Fix.defaultUERE

    public let uere: Double
    /// Whether a dated invalid epoch (the receiver is still acquiring) comes out as a `Fix` of quality
    /// `.invalid` at 0°, 0° carrying `satellitesHeard`; otherwise it is dropped, as gpsd does.
    public let reportsNoFixEpochs: Bool
    /// Whether a sentence that arrives after its epoch was completed early (learnt end, quiet line)
    /// reopens the epoch, which is emitted again, amended, at its next completion (gpsd reports again
    /// with the same time; a log decoder wants every sentence merged). Otherwise it is dropped and
    /// counted: a live reader has already acted on the fix.
    public let amendsCompletedEpochs: Bool
    public private(set) var stats = NMEAFixAssemblerStats()

    private var epoch: NMEAEpoch?
    /// The last epoch completed before the next time arrived (learnt end or quiet line), and how.
    private var closed: (time: NMEATimeOfDay, whenQuiet: Bool)?
    /// The epoch `closed` describes, kept to be amended (`amendsCompletedEpochs`).
    private var closedEpoch: NMEAEpoch?
    /// Time-less sentences that arrived after `closed`: they open the next epoch.
    private var leading: [NMEAMessage] = []
    /// The time of day of the last timed sentence.
    private var lastTime: NMEATimeOfDay?
    private var cycleEnd = NMEACycleEndLearner()
    /// Most time-less sentences kept for the next epoch (a cycle's worth).
    static let maxLeading = 32
    /// The date of the last epoch, whether it was trusted, and its time of day, for epochs without RMC/ZDA.
    private var lastDate: (date: NMEADate, trusted: Bool, time: NMEATimeOfDay)?
    /// The last GSV count per constellation and signal (GSV cycles are often slower than fixes).
    /// A short list searched linearly (a receiver has a handful of constellations and signals):
    /// cheaper than hashing per GSV.
    private var inViewBySignal: [(key: SignalKey, count: Int)] = []
    /// `inView` as last computed; nil when `inViewBySignal` changed since.
    private var inViewCache: [Constellation: Int]?

    private struct SignalKey: Equatable {
        var constellation: Constellation
        var signal: Int
    }

    /// Satellites in view per constellation: the largest count over its signals.
    private mutating func inView() -> [Constellation: Int] {
        if let inViewCache { return inViewCache }
        let result = Self.largestPerConstellation(inViewBySignal.lazy.map { ($0.key, $0.count) })
        inViewCache = result
        return result
    }

    /// Per constellation, the largest of its signals' counts (a satellite is counted once per signal).
    private static func largestPerConstellation(_ counts: some Sequence<(SignalKey, Int)>) -> [Constellation: Int] {
        var result: [Constellation: Int] = [:]
        for (key, count) in counts where count > (result[key.constellation] ?? -1) {
            result[key.constellation] = count
        }
        return result
    }

    public init(
        uere: Double = NMEAFixAssembler.defaultUERE, reportsNoFixEpochs: Bool = false, amendsCompletedEpochs: Bool = false
    ) {
        self.uere = uere
        self.reportsNoFixEpochs = reportsNoFixEpochs
        self.amendsCompletedEpochs = amendsCompletedEpochs
    }

    /// The fixes one message completed, oldest first: none, one, or two (a one-sentence cycle: the
    /// previous epoch at its new time, and its own as the learnt end).
    public struct Completed: Sequence, IteratorProtocol, Sendable {
        var first: Fix?
        var second: Fix?

        public mutating func next() -> Fix? {
            defer { (first, second) = (second, nil) }
            return first
        }
    }

    /// Adds one decoded message; returns the fixes of the epochs it completed: the previous one when
    /// this message starts a new epoch, the current one when this message is the learnt end of a cycle.
    public mutating func add(_ message: NMEAMessage) -> Completed {
        let key = message.cycleKey
        guard let time = message.timeOfDay else {
            if epoch != nil {
                merge(message)
            } else if let closed {
                if case let .gsv(gsv) = message { record(gsv) }
                if !closed.whenQuiet, reopenClosedEpoch() {
                    merge(message)
                } else if !closed.whenQuiet {
                    // After the learnt end: a straggler of the cycle just completed (a GSA every few cycles).
                    stats.trailingSentences += 1
                } else if leading.count < Self.maxLeading {
                    // After a quiet line: the next cycle begins with it.
                    leading.append(message)
                }
            } else {
                if message.isEpochData { stats.orphanSentences += 1 }
                if case let .gsv(gsv) = message { record(gsv) }
            }
            return Completed(first: cycleEnd.saw(key) && epoch != nil ? complete(whenQuiet: false) : nil)
        }
        if let lastTime, !Self.sameCycle(lastTime, time) { cycleEnd.cycleBegan() }
        lastTime = time
        if epoch == nil, let closed, Self.sameCycle(closed.time, time) {
            stats.lateSentences += 1
            if closed.whenQuiet { stats.lateAfterQuiet += 1 } else { cycleEnd.forget() }
            _ = cycleEnd.saw(key)
            if reopenClosedEpoch() {
                epoch?.time = time
                merge(message)
            }
            return Completed()
        }
        var completed = Completed()
        if let epoch, !Self.sameCycle(epoch.time, time) {
            completed.first = flush()
        }
        if epoch == nil { open(at: time) }
        // The cycle's time is its latest timed sentence's (gpsd reports the last time it was given).
        epoch?.time = time
        merge(message)
        if cycleEnd.saw(key) {
            let own = complete(whenQuiet: false)
            if completed.first == nil { completed.first = own } else { completed.second = own }
        }
        return completed
    }

    /// The line has been quiet for a while: the open epoch is complete. Returns its fix.
    public mutating func lineQuiet() -> Fix? {
        guard epoch != nil else { return nil }
        return complete(whenQuiet: true)
    }

    /// Times of day less than this far apart (milliseconds) belong to one receiver cycle, so that a GLL
    /// stamped `.303` and a GGA stamped `.30` (one receiver writing milliseconds here, centiseconds
    /// there) make one epoch. gpsd's window (a change of more than 10 ms starts a new cycle), without
    /// its edge: receivers whose cycles are 10 ms apart (.990 then .000, each a whole RMC + GGA cycle)
    /// make two epochs, as gpsd reports them.
    static let cycleTimeTolerance = 10

    /// Whether two times of day belong to one cycle (`cycleTimeTolerance`), across midnight too.
    static func sameCycle(_ a: NMEATimeOfDay, _ b: NMEATimeOfDay) -> Bool {
        let day = 86_400_000
        let difference = abs(a.millisecondsSinceMidnight - b.millisecondsSinceMidnight)
        return min(difference, day - difference) < cycleTimeTolerance
    }

    /// Throws the open epoch away without a fix (the receiver was powered off or on, or the link
    /// reconnected: what is open belongs to a power cycle that is over). With `relearn`, also forgets
    /// the learnt end of a cycle (a reconnect or a baud change may bring another sentence set).
    public mutating func discardOpenEpoch(relearn: Bool = false) {
        if epoch != nil { stats.discardedEpochs += 1 }
        epoch = nil
        closed = nil
        closedEpoch = nil
        leading.removeAll()
        lastTime = nil
        if relearn { cycleEnd.forget() }
    }

    /// Reopens the epoch completed last, to amend it (`amendsCompletedEpochs`); false when it is not kept.
    private mutating func reopenClosedEpoch() -> Bool {
        guard let closedEpoch else { return false }
        stats.amendedEpochs += 1
        epoch = closedEpoch
        self.closedEpoch = nil
        closed = nil
        return true
    }

    private mutating func open(at time: NMEATimeOfDay) {
        var opened = NMEAEpoch(time: time)
        for message in leading { opened.merge(message) }
        leading.removeAll()
        closed = nil
        closedEpoch = nil
        epoch = opened
    }

    private mutating func complete(whenQuiet: Bool) -> Fix? {
        guard let epoch else { return nil }
        if whenQuiet { stats.completedWhenQuiet += 1 } else { stats.completedAtCycleEnd += 1 }
        closed = (epoch.time, whenQuiet)
        if amendsCompletedEpochs { closedEpoch = epoch }
        return flush()
    }

    /// Completes the pending epoch, if any; returns its fix when it was valid and dated.
    public mutating func flush() -> Fix? {
        guard let epoch else { return nil }
        self.epoch = nil
        stats.epochs += 1
        let dated = date(for: epoch)
        let date = dated?.date
        if let dated { lastDate = (dated.date, dated.trusted, epoch.time) }
        guard !epoch.invalid, epoch.gsaMode != .noFix, let coordinate = epoch.coordinate else {
            stats.invalidEpochs += 1
            guard reportsNoFixEpochs, let date else { return nil }
            stats.noFixEpochsReported += 1
            var fix = Fix.noFix(time: date.date(at: epoch.time), satellitesHeard: heard())
            let view = inView()
            fix.satellitesInView = view.isEmpty ? nil : view.values.reduce(0, +)
            return fix
        }
        guard let date else {
            stats.undatedEpochs += 1
            return nil
        }
        stats.fixesEmitted += 1
        var fix = epoch.fix(time: date.date(at: epoch.time), coordinate: coordinate, inView: inView(), uere: uere)
        fix.satellitesHeard = heard()
        if dated?.trusted == false {
            fix.timeUntrusted = true
            stats.untrustedTimeFixes += 1
        }
        return fix
    }

    private mutating func merge(_ message: NMEAMessage) {
        if case let .gsv(gsv) = message { record(gsv) }
        epoch?.merge(message)
    }

    /// Satellites heard (SNR given) per constellation and signal, counted over the parts of the
    /// current GSV cycle: (heard in the last complete cycle, heard so far in the current one).
    private var heardBySignal: [(key: SignalKey, heard: Int, counting: Int)] = []

    /// Satellites heard, all constellations; nil when no GSV came yet.
    private func heard() -> Int? {
        guard !heardBySignal.isEmpty else { return nil }
        return Self.largestPerConstellation(heardBySignal.lazy.map { ($0.key, $0.heard) }).values.reduce(0, +)
    }

    private mutating func countHeard(_ gsv: GSVMessage, key: SignalKey) {
        let here = gsv.satellites.count { ($0.snr ?? 0) > 0 }
        let index = heardBySignal.firstIndex { $0.key == key } ?? {
            heardBySignal.append((key, 0, 0))
            return heardBySignal.count - 1
        }()
        let counting = (gsv.messageNumber <= 1 ? 0 : heardBySignal[index].counting) + here
        heardBySignal[index].counting = counting
        if gsv.messageNumber >= gsv.totalMessages { heardBySignal[index].heard = counting }
    }

    private mutating func record(_ gsv: GSVMessage) {
        let key = SignalKey(constellation: Constellation(talker: gsv.talker) ?? .unknown, signal: gsv.signalID ?? 0)
        countHeard(gsv, key: key)
        if let index = inViewBySignal.firstIndex(where: { $0.key == key }) {
            guard inViewBySignal[index].count != gsv.satellitesInView else { return }
            inViewBySignal[index].count = gsv.satellitesInView
        } else {
            inViewBySignal.append((key, gsv.satellitesInView))
        }
        inViewCache = nil
    }

    /// The epoch's own date (RMC, ZDA), else the last date, a day later if the clock passed midnight;
    /// with whether it is trusted.
    private func date(for epoch: NMEAEpoch) -> (date: NMEADate, trusted: Bool)? {
        if let date = epoch.date { return (date, epoch.dateTrusted) }
        guard let lastDate else { return nil }
        return (epoch.time < lastDate.time ? lastDate.date.adding(days: 1) : lastDate.date, lastDate.trusted)
    }
}

extension NMEAMessage {
    /// The UTC time of day of sentences that carry one; nil for the time-less ones.
    var timeOfDay: NMEATimeOfDay? {
        switch self {
        case let .gga(gga): gga.time
        case let .rmc(rmc): rmc.time
        case let .gns(gns): gns.time
        case let .gll(gll): gll.time
        case let .zda(zda): zda.time
        case let .gst(gst): gst.time
        case .gsa, .gsv, .vtg, .txt, .pgrmz, .unsupported: nil
        }
    }

    /// Whether the message carries fix data (as opposed to text or unsupported sentences).
    var isEpochData: Bool {
        switch self {
        case .txt, .unsupported: false
        default: true
        }
    }
}
