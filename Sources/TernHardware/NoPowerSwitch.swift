import TernCore

/// For receivers Tern cannot switch (a HAT without an enable line): the receiver stays powered,
/// and "power off" only means Tern ignores its fixes until the next one is due.
public struct NoPowerSwitch: PowerSwitch {
    public init() {}
    public func setPower(on _: Bool) async throws {}
}
