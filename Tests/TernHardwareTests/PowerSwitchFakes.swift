import Clocks
import Synchronization
import TernCore
import TernHardware

/// One level change on a fake GPIO line, with the virtual time it happened at.
struct LineChange: Equatable, CustomStringConvertible {
    var line: String
    var active: Bool
    var at: Duration
    var description: String { "\(line)=\(active ? 1 : 0)@\(at)" }
}

/// Records the level changes of several fake lines in one ordered log, stamped by a `TestClock`.
final class LineLog: Sendable {
    let clock: TestClock<Duration>
    private let start: TestClock<Duration>.Instant
    private let changes = Mutex<[LineChange]>([])

    init(clock: TestClock<Duration>) {
        self.clock = clock
        self.start = clock.now
    }

    var all: [LineChange] { changes.withLock { $0 } }
    func of(_ line: String) -> [LineChange] { all.filter { $0.line == line } }

    fileprivate func record(_ line: String, _ active: Bool) {
        let at = start.duration(to: clock.now)
        changes.withLock { $0.append(LineChange(line: line, active: active, at: at)) }
    }
}

/// A GPIO line that records its levels into a `LineLog`; can be told to fail.
final class FakeGPIOLine: GPIOLineDriver {
    let name: String
    private let log: LineLog
    private let failure = Mutex<(any Error)?>(nil)

    init(_ name: String, log: LineLog) {
        self.name = name
        self.log = log
    }

    func fail(with error: (any Error)?) { failure.withLock { $0 = error } }

    func set(active: Bool) throws {
        if let error = failure.withLock({ $0 }) { throw error }
        log.record(name, active)
    }
}

/// A serial port that records what is written and reads nothing; can be told to fail writes.
final class RecordingSerialPort: SerialPort {
    private let state = Mutex<(written: [[UInt8]], failure: (any Error)?)>(([], nil))

    var written: [[UInt8]] { state.withLock { $0.written } }
    func failWrites(with error: (any Error)?) { state.withLock { $0.failure = error } }

    func read(maxCount _: Int) async throws -> [UInt8] {
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }

    func write(_ bytes: [UInt8]) async throws {
        let failure: (any Error)? = state.withLock { s in
            if s.failure == nil { s.written.append(bytes) }
            return s.failure
        }
        if let failure { throw failure }
    }

    func close() async {}
}

enum FakeHardwareError: Error { case gpio, serial }
