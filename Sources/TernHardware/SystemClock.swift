import CTernClock
import Foundation
import TernNMEA

/// The system clock as the board's time source: whether the kernel says it is synchronised
/// (adjtimex(2): NTP, chrony or systemd-timesyncd has set it), and the reference it gives for
/// receiver dates.
public enum SystemClock {
    /// True when the kernel reports the clock synchronised to a time source.
    public static func isSynchronised() -> Bool { tern_clock_synchronised() == 1 }

    /// UTC now when the clock is synchronised, else nil (for `Gateway`'s `synchronisedTime`).
    public static let synchronisedTime: @Sendable () -> Date? = { isSynchronised() ? Date() : nil }

    /// The reference for receiver dates (`NMEADateReference`): the clock itself when it is not behind
    /// the build's reference date (synchronised or not: a correction then never dates a fix after it),
    /// else only the build date as a lower bound (a Pi without RTC or network boots in the past).
    public static let dateReference: @Sendable () -> NMEADateReference = {
        let now = Date()
        guard now >= NMEADecodingContext.buildReferenceDate else {
            return .notBefore(NMEADecodingContext.buildReferenceDate)
        }
        return .clock(now, synchronised: isSynchronised())
    }
}
