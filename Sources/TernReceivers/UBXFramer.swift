/// Counters kept by `UBXFramer`.
public struct UBXFramerStats: Sendable, Hashable {
    /// Frames delivered (checksum verified).
    public var frames = 0
    /// Candidate frames whose checksum did not match.
    public var checksumErrors = 0
    /// Candidate frames declaring a payload longer than `maxPayloadLength`.
    public var overlong = 0

    public init() {}
}

/// Separates UBX frames from the NMEA text around them, incrementally.
///
/// Feed bytes as read; get back UBX frames and the other bytes (`.text`) in stream order, to be
/// passed on to `NMEAFramer`. A bad checksum or an implausible length costs only the sync byte:
/// scanning resumes right after it, so a real frame inside a false start is still found.
/// At most `UBXFrame.overhead + maxPayloadLength` bytes are ever held.
public struct UBXFramer: Sendable {
    public enum Output: Sendable, Hashable {
        case frame(UBXFrame)
        case text([UInt8])
    }

    /// MON-VER with many extensions is the largest reply Tern asks for (~400 bytes).
    public static let defaultMaxPayloadLength = 1024

    public let maxPayloadLength: Int
    public private(set) var stats = UBXFramerStats()
    /// Bytes of a possible frame, always starting with the first sync byte.
    private var pending: [UInt8] = []

    public init(maxPayloadLength: Int = UBXFramer.defaultMaxPayloadLength) {
        self.maxPayloadLength = maxPayloadLength
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) -> [Output] {
        var outputs: [Output] = []
        var text: [UInt8] = []
        for byte in bytes {
            if pending.isEmpty {
                if byte == UBXFrame.sync[0] { pending.append(byte) } else { text.append(byte) }
                continue
            }
            pending.append(byte)
            scan(into: &outputs, text: &text)
        }
        if !text.isEmpty { outputs.append(.text(text)) }
        return outputs
    }

    /// Resolves `pending` as far as it can: emits a frame, or releases bytes that cannot start one.
    private mutating func scan(into outputs: inout [Output], text: inout [UInt8]) {
        while let first = pending.first {
            guard first == UBXFrame.sync[0] else {
                text.append(pending.removeFirst())
                continue
            }
            switch classify() {
            case .needMore:
                return
            case .notAFrame:
                text.append(pending.removeFirst())
            case .frame(let frame, let size):
                if !text.isEmpty { outputs.append(.text(text)) }
                text = []
                outputs.append(.frame(frame))
                stats.frames += 1
                pending.removeFirst(size)
            }
        }
    }

    private enum Candidate {
        case needMore
        case notAFrame
        case frame(UBXFrame, size: Int)
    }

    private mutating func classify() -> Candidate {
        guard pending.count >= 2 else { return .needMore }
        guard pending[1] == UBXFrame.sync[1] else { return .notAFrame }
        guard pending.count >= 6 else { return .needMore }
        let length = Int(pending[4]) | Int(pending[5]) << 8
        guard length <= maxPayloadLength else {
            stats.overlong += 1
            return .notAFrame
        }
        let size = UBXFrame.overhead + length
        guard pending.count >= size else { return .needMore }
        let (a, b) = UBXFrame.checksum(pending[2..<(size - 2)])
        guard pending[size - 2] == a, pending[size - 1] == b else {
            stats.checksumErrors += 1
            return .notAFrame
        }
        let frame = UBXFrame(messageClass: pending[2], messageID: pending[3], payload: Array(pending[6..<(size - 2)]))
        return .frame(frame, size: size)
    }
}
