import Synchronization
import TernCore

/// Records every clock sample offered to it.
public final class SpyTimeSink: TimeSink {
    private let recorded = Mutex<[ClockSample]>([])
    public init() {}
    public var samples: [ClockSample] { recorded.withLock { $0 } }
    public func offer(_ sample: ClockSample) { recorded.withLock { $0.append(sample) } }
}
