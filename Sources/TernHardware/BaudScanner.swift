import TernCore
import TernNMEA

/// Finds the baud rate a receiver talks at: tries each candidate rate on the open port and
/// picks the first that yields checksum-valid NMEA sentences.
public struct BaudScanner: Sendable {
    public struct Options: Sendable, Hashable {
        /// The order rates are tried in: the common defaults first.
        public var candidates: [Int]
        /// How long to listen at each rate (a 1 Hz receiver sends a burst every second).
        public var dwell: Duration
        /// Valid sentences needed to accept a rate.
        public var requiredSentences: Int
        public var readSize: Int

        public init(
            candidates: [Int] = [9600, 4800, 19200, 38400, 57600, 115_200], dwell: Duration = .milliseconds(1500),
            requiredSentences: Int = 2, readSize: Int = 256
        ) {
            self.candidates = candidates
            self.dwell = dwell
            self.requiredSentences = requiredSentences
            self.readSize = readSize
        }
    }

    public let options: Options
    private let sleep: @Sendable (Duration) async throws -> Void

    public init(options: Options = Options(), clock: some Clock<Duration> = ContinuousClock()) {
        self.options = options
        self.sleep = { duration in try await clock.sleep(for: duration) }
    }

    /// Tries the candidates in order; returns the first rate that yields valid sentences, leaving
    /// the port at it, or nil (the port back at its original rate) when none does.
    public func scan(_ port: some SerialPort & BaudRateConfigurable) async throws -> Int? {
        let original = await port.baudRate
        for rate in options.candidates {
            try await port.setBaudRate(rate)
            if try await yieldsSentences(port) { return rate }
        }
        try await port.setBaudRate(original)
        return nil
    }

    /// Whether `requiredSentences` valid sentences arrive within `dwell`.
    private func yieldsSentences(_ port: some SerialPort) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { [options] in
                var framer = NMEAFramer()
                var valid = 0
                while valid < options.requiredSentences {
                    valid += framer.append(try await port.read(maxCount: options.readSize)).count
                }
                return true
            }
            group.addTask { [options, sleep] in
                try await sleep(options.dwell)
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
    }
}
