import Foundation

/// Switches the receiver's supply (or its run/standby state) on and off.
public protocol PowerSwitch: Sendable {
    func setPower(on: Bool) async throws
}

/// A GPS receiver: owns its serial port and power, and yields fixes while powered.
public protocol GPSReceiver: Sendable {
    func powerOn() async throws
    func powerOff() async throws
    /// The fixes the receiver reports. Meant for one consumer; finishes when the receiver stops
    /// and throws when the device fails for good.
    func fixes() -> AsyncThrowingStream<Fix, any Error>
}
