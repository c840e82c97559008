import Foundation

/// `tern-queue-child` (Tests/TernQueueChild), the process the crash harness cuts the power of or
/// SIGKILLs: where SwiftPM built it, and the lines it prints. The child prints a line only after
/// the call it reports has returned, with one write(2), so whatever a killed child printed is true.
public enum QueueChild {
    /// Where `tern-queue-child` is, or nil when it was not built (tests using it are then skipped with that reason).
    public static let url: URL? = {
        let name = "tern-queue-child"
        let beside = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: name)
        let fromSource = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../.build/debug/\(name)")
        return [beside, fromSource].first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The exit status of a child whose power the crash VFS cut (`_exit` inside a write or sync).
    public static let powerCutStatus: Int32 = 86

    /// The seed of this test run's crash harness: `TERN_CRASH_SEED` when set, else a new one;
    /// printed, so that a failing run can be repeated.
    public static let seed: UInt64 = {
        let seed = ProcessInfo.processInfo.environment["TERN_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        print("crash harness seed \(seed) (TERN_CRASH_SEED=\(seed) repeats it)")
        return seed
    }()

    /// One line of the child's standard output.
    public enum Line: Sendable, Hashable, LosslessStringConvertible {
        /// The queue opened; the crash VFS had counted `operations` writes and syncs by then.
        case opened(operations: Int64)
        /// `enqueue` returned: the position is stored.
        case stored(UUID)
        /// The forwarder runs (the queue opened and the uplink is set up).
        case ready
        /// The forwarder called `acknowledge(through:)`; `acknowledged` follows when it returned.
        case acknowledging(through: Int64)
        case acknowledged(through: Int64)
        /// The child is about to acknowledge (delete) this stored position: from then on it may be gone.
        case releasing(UUID)
        /// A batch goes to the uplink; `sent` follows with whether it was delivered.
        case sending(first: Int64, last: Int64)
        case sent(delivered: Bool)
        /// A drain ended with `left` positions still queued.
        case drained(left: Int)
        /// A call the child makes failed (it should not: the harness counts this as a failure).
        case failed(String)

        public var description: String {
            switch self {
            case let .opened(operations): "opened \(operations)"
            case let .stored(id): "stored \(id.uuidString)"
            case .ready: "ready"
            case let .acknowledging(through): "acknowledging \(through)"
            case let .acknowledged(through): "acknowledged \(through)"
            case let .releasing(id): "releasing \(id.uuidString)"
            case let .sending(first, last): "sending \(first) \(last)"
            case let .sent(delivered): "sent \(delivered ? "delivered" : "failed")"
            case let .drained(left): "drained \(left)"
            case let .failed(reason): "failed \(reason.replacingOccurrences(of: "\n", with: " "))"
            }
        }

        public init?(_ description: String) {
            let words = description.split(separator: " ").map(String.init)
            switch (words.first, words.count) {
            case ("opened", 2): guard let n = Int64(words[1]) else { return nil }; self = .opened(operations: n)
            case ("stored", 2): guard let id = UUID(uuidString: words[1]) else { return nil }; self = .stored(id)
            case ("ready", 1): self = .ready
            case ("acknowledging", 2): guard let n = Int64(words[1]) else { return nil }; self = .acknowledging(through: n)
            case ("acknowledged", 2): guard let n = Int64(words[1]) else { return nil }; self = .acknowledged(through: n)
            case ("releasing", 2): guard let id = UUID(uuidString: words[1]) else { return nil }; self = .releasing(id)
            case ("sending", 3):
                guard let first = Int64(words[1]), let last = Int64(words[2]) else { return nil }
                self = .sending(first: first, last: last)
            case ("sent", 2): self = .sent(delivered: words[1] == "delivered")
            case ("drained", 2): guard let n = Int(words[1]) else { return nil }; self = .drained(left: n)
            case ("failed", _): self = .failed(words.dropFirst().joined(separator: " "))
            default: return nil
            }
        }
    }
}
