import Synchronization
import TernCore

/// A serial port that replays scripted chunks, one per read, then ends as told.
final class FakeSerialPort: SerialPort {
    enum Ending: Sendable {
        /// Waits (without spinning) until the reading task is cancelled.
        case hang
        case fail(SerialPortError)
        /// Returns `chunk` again every `interval`, as a receiver that keeps talking.
        case repeating([UInt8], every: Duration)
    }

    private let state: Mutex<(chunks: [[UInt8]], reads: Int, written: [[UInt8]], closed: Bool)>
    private let ending: Ending

    init(chunks: [[UInt8]], then ending: Ending = .hang) {
        state = Mutex((chunks, 0, [], false))
        self.ending = ending
    }

    /// How many times `read` was called.
    var reads: Int { state.withLock { $0.reads } }

    func read(maxCount: Int) async throws -> [UInt8] {
        let next: [UInt8]? = state.withLock { state in
            state.reads += 1
            return state.chunks.isEmpty ? nil : state.chunks.removeFirst()
        }
        if let next { return next }
        switch ending {
        case .hang:
            try await Task.sleep(for: .seconds(3600))
            throw CancellationError()
        case let .fail(error):
            throw error
        case let .repeating(chunk, interval):
            try await Task.sleep(for: interval)
            return chunk
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        state.withLock { $0.written.append(bytes) }
    }

    func close() async {
        state.withLock { $0.closed = true }
    }
}

/// Stands in for `TermiosSerialPort.open`: each call takes the next scripted outcome
/// (the last one repeats) and records the baud rate asked for.
final class ScriptedOpener: Sendable {
    enum Outcome: Sendable {
        case port(any SerialPort)
        case fail(SerialPortError)
    }

    private let state: Mutex<(outcomes: [Outcome], bauds: [Int])>

    init(_ outcomes: [Outcome]) {
        state = Mutex((outcomes, []))
    }

    /// The baud rate of every open call, in order.
    var bauds: [Int] { state.withLock { $0.bauds } }
    var calls: Int { bauds.count }

    func open(path _: String, baudRate: Int) throws -> any SerialPort {
        let outcome: Outcome? = state.withLock { state in
            state.bauds.append(baudRate)
            return state.outcomes.count > 1 ? state.outcomes.removeFirst() : state.outcomes.first
        }
        switch outcome {
        case let .port(port)?: return port
        case let .fail(error)?: throw error
        case nil: throw SerialPortError.cannotOpen(path: "fake", reason: "nothing scripted")
        }
    }
}
