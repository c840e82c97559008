import Synchronization

/// Conditions the daemon works around and retries instead of exiting (the metrics port taken, its
/// address not assigned yet), keyed by the setting they concern. `tern status` and `tern doctor`
/// show them (the tracker counts as degraded) and the `tern_service_problems` gauge counts them,
/// until they clear.
public final class ServiceProblems: Sendable {
    private let problems = Mutex<[String: String]>([:])

    public init() {}

    /// Records the problem with `key`, or clears it (nil).
    public func set(_ key: String, _ problem: String?) {
        problems.withLock { $0[key] = problem }
    }

    /// Every current problem, in the order of their keys.
    public var current: [String] {
        problems.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
    }
}
