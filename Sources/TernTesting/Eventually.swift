/// Waits (in real time, checking every millisecond) until `condition` holds; returns whether it did.
/// For letting concurrent work settle in tests — never a timing assertion. The default limit is
/// generous: it costs nothing when the condition comes true, and a full parallel run on 2 cores can
/// keep a task from running for several seconds.
public func eventually(
    within limit: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: limit)
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return try await condition()
}
