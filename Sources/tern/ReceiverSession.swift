import Foundation
import TernHardware
import TernReceivers

/// The I/O glue of `tern receiver`: writes commands, reads and prints replies until a deadline.
actor ReceiverSession {
    private let port: any ReceiverLine
    private var reader = ReceiverMessageReader()
    private var buffered: [ReceiverMessage] = []
    /// Ordinary NMEA sentences (positions, satellites) are counted, not printed.
    private(set) var messagesSeen = 0

    init(port: any ReceiverLine) {
        self.port = port
    }

    func write(_ bytes: [UInt8]) async throws {
        try await port.write(bytes)
    }

    func close() async {
        await port.close()
    }

    /// Prints replies until one settles `command`; nil when `wait` runs out first.
    func awaitReply(to command: ReceiverCommand, within wait: Duration) async throws -> AckResult? {
        let deadline = ContinuousClock.now + wait
        while let message = try await next(until: deadline) {
            if let result = command.expectation.result(for: message) { return result }
        }
        return nil
    }

    /// Sends both version queries, then listens until the chipset is known with its version or `wait` ends.
    func detect(within wait: Duration) async throws -> Chipset {
        var detector = ChipsetDetector()
        try await port.write(PMTKCommand.queryFirmware.bytes + UBXMessages.pollVersion.bytes)
        let deadline = ContinuousClock.now + wait
        while !detector.isConclusive, let message = try await next(until: deadline) {
            detector.observe(message)
        }
        return detector.chipset
    }

    /// The next message (printed unless it is ordinary NMEA), or nil at the deadline.
    private func next(until deadline: ContinuousClock.Instant) async throws -> ReceiverMessage? {
        while buffered.isEmpty {
            guard let chunk = try await read(until: deadline) else { return nil }
            buffered = reader.append(chunk)
        }
        let message = buffered.removeFirst()
        messagesSeen += 1
        if Self.isNoteworthy(message) { print("<- \(message.description)") }
        return message
    }

    private func read(until deadline: ContinuousClock.Instant) async throws -> [UInt8]? {
        let port = self.port
        return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask { try await port.read(maxCount: 4096) }
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// UBX frames, proprietary sentences and TXT messages; not the position/satellite stream.
    private static func isNoteworthy(_ message: ReceiverMessage) -> Bool {
        guard case .nmea(let sentence) = message else { return true }
        return sentence.isProprietary || sentence.type == "TXT"
    }
}
