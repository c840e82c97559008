import Foundation
import TernCore

/// When each receiver cycle was first heard: the system time at which the first sentence carrying a
/// cycle's UTC time of day was read, for `Fix.receivedAt` (the `tv` of chrony's SOCK samples).
///
/// A cycle is named by its time of day, matched as the assembler matches its sentences (within
/// `NMEAFixAssembler.cycleTimeTolerance`). Only the last few cycles are remembered: a fix is stamped
/// as it completes, one or two cycles after its first sentence at most.
public struct NMEAEpochArrivals: Sendable {
    private var arrivals: [(time: NMEATimeOfDay, at: Date)] = []
    static let kept = 8

    public init() {}

    /// `message` was read at `date` (the system's realtime clock when its bytes were read).
    public mutating func saw(_ message: NMEAMessage, at date: Date) {
        guard let time = message.timeOfDay else { return }
        if let index = arrivals.firstIndex(where: { NMEAFixAssembler.sameCycle($0.time, time) }) {
            if date < arrivals[index].at { arrivals[index].at = date }
            return
        }
        arrivals.append((time, date))
        if arrivals.count > Self.kept { arrivals.removeFirst(arrivals.count - Self.kept) }
    }

    /// When the first sentence of the cycle dated `time` was read; nil when none was seen.
    public func firstRead(ofCycleAt time: Date) -> Date? {
        let timeOfDay = NMEATimeOfDay(of: time)
        return arrivals.first { NMEAFixAssembler.sameCycle($0.time, timeOfDay) }?.at
    }

    /// `fix` with `receivedAt` set from its cycle's first sentence (unchanged when none was seen).
    public func stamped(_ fix: Fix) -> Fix {
        var fix = fix
        fix.receivedAt = firstRead(ofCycleAt: fix.time) ?? fix.receivedAt
        return fix
    }
}
