import Synchronization
import TernCore

/// An uplink that answers from a script (then `.delivered` once the script runs out) and records batches.
public final class ScriptedUplink: Uplink {
    private let state = Mutex<(script: [UplinkResult], batches: [[QueuedPosition]])>(([], []))

    public init(_ script: [UplinkResult] = []) {
        state.withLock { $0.script = script }
    }

    public var batches: [[QueuedPosition]] { state.withLock { $0.batches } }
    public var delivered: [QueuedPosition] { batches.flatMap { $0 } }

    public func script(_ results: [UplinkResult]) { state.withLock { $0.script.append(contentsOf: results) } }

    public func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        state.withLock { s in
            s.batches.append(batch)
            return s.script.isEmpty ? .delivered : s.script.removeFirst()
        }
    }
}
