import Foundation

/// One measurement of the system clock against the receiver: when the receiver's epoch was read, by
/// the system's realtime clock, and the UTC the receiver gave it. chrony's SOCK refclock takes it
/// as (`tv`, `offset`): `tv` the system time of the measurement, `offset` true time minus it.
public struct ClockSample: Sendable, Hashable {
    /// The system's realtime clock when the epoch's first timed sentence was read.
    public var receivedAt: Date
    /// The receiver's UTC for that epoch.
    public var utc: Date

    public init(receivedAt: Date, utc: Date) {
        self.receivedAt = receivedAt
        self.utc = utc
    }

    /// The sample of a fix read live (nil when it carries no receive time).
    public init?(_ fix: Fix) {
        guard let receivedAt = fix.receivedAt else { return nil }
        self.init(receivedAt: receivedAt, utc: fix.time)
    }

    /// How far the receiver's UTC is ahead of the system clock, seconds (negative: the clock is
    /// ahead). It includes the receiver's output delay and the line's: an NMEA time is always late.
    public var offset: Double { utc.timeIntervalSince(receivedAt) }

    /// `receivedAt` as a `struct timeval`: whole seconds (rounded down, also before 1970) and
    /// microseconds in 0..<1_000_000.
    public var timeval: (seconds: Int64, microseconds: Int32) {
        let total = (receivedAt.timeIntervalSince1970 * 1_000_000).rounded()
        let micros = Int64(total)
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        return (seconds, Int32(micros - seconds * 1_000_000))
    }
}

/// Where the receiver's trusted times go to discipline the system clock (chrony's SOCK refclock on a
/// board). `offer` never blocks and never fails the caller: a sink that cannot deliver drops the
/// sample and says so in its own log.
public protocol TimeSink: Sendable {
    func offer(_ sample: ClockSample)
}
