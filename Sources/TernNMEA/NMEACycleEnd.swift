/// Learns which sentence ends a receiver's cycle, so that a cycle can be completed the moment its
/// last sentence arrives instead of when the next cycle's first one does (a whole cycle later).
///
/// gpsd's rule (`driver_nmea0183.c`, `cycle_enders`): the sentence seen just before the time of day
/// changes ended the cycle. Tern takes it for the end once it ended `cyclesToLearn` cycles in a
/// row, and forgets it when it proves wrong: a sentence of an already completed cycle arrives after
/// it (`forget()`), or `missesToForget` cycles in a row go by without it (the receiver was
/// reconfigured, or its sentence set changed with the fix).
///
/// Sentences are told apart by type and talker; a multi-part GSV counts as its last part only.
struct NMEACycleEndLearner: Sendable, Hashable {
    static let cyclesToLearn = 3
    static let missesToForget = 2

    /// The learnt end of a cycle; nil while learning.
    private(set) var end: UInt64?
    private var last: UInt64?
    private var candidate: UInt64?
    private var streak = 0
    private var endSeen = false
    private var misses = 0

    /// Notes the next sentence; returns whether it is the learnt end of the cycle.
    mutating func saw(_ key: UInt64) -> Bool {
        last = key
        guard key == end else { return false }
        endSeen = true
        return true
    }

    /// A sentence with a new time of day arrived (call before `saw` for it): the sentence before it
    /// ended the previous cycle.
    mutating func cycleBegan() {
        guard let last else { return }
        if end != nil {
            misses = endSeen ? 0 : misses + 1
            endSeen = false
            if misses >= Self.missesToForget { forget() }
            return
        }
        if last == candidate {
            streak += 1
        } else {
            candidate = last
            streak = 1
        }
        if streak >= Self.cyclesToLearn {
            end = last
            misses = 0
            endSeen = false
        }
    }

    /// The learnt end proved wrong: learn afresh.
    mutating func forget() {
        end = nil
        candidate = nil
        streak = 0
        misses = 0
        endSeen = false
    }
}

extension NMEAMessage {
    /// What `NMEACycleEndLearner` tells sentences apart by, packed into one word (no allocation):
    /// the message kind (8 bits), the talker (16 bits) and, for sentences Tern does not decode, the
    /// first 5 bytes of the type (40 bits).
    var cycleKey: UInt64 {
        switch self {
        case let .gga(m): Self.key(1, m.talker)
        case let .rmc(m): Self.key(2, m.talker)
        case let .gns(m): Self.key(3, m.talker)
        case let .gll(m): Self.key(4, m.talker)
        case let .gsa(m): Self.key(5, m.talker)
        // Only the last part of a GSV group can end a cycle.
        case let .gsv(m): Self.key(m.messageNumber >= m.totalMessages ? 6 : 7, m.talker)
        case let .vtg(m): Self.key(8, m.talker)
        case let .zda(m): Self.key(9, m.talker)
        case let .gst(m): Self.key(10, m.talker)
        case let .txt(m): Self.key(11, m.talker)
        case .pgrmz: Self.key(13, "P")
        case let .unsupported(sentence):
            Self.key(12, sentence.talker) | Self.pack(sentence.type.utf8, count: 5) << 24
        }
    }

    private static func key(_ kind: UInt64, _ talker: String) -> UInt64 {
        kind | pack(talker.utf8, count: 2) << 8
    }

    private static func pack(_ bytes: String.UTF8View, count: Int) -> UInt64 {
        var word: UInt64 = 0
        for (index, byte) in bytes.prefix(count).enumerated() { word |= UInt64(byte) << (8 * UInt64(index)) }
        return word
    }
}
