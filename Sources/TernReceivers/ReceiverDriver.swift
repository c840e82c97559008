/// A receiver's command set behind one interface: MediaTek/Quectel PMTK, u-blox UBX, or plain NMEA.
///
/// Drivers only build bytes and judge replies; writing them and driving GPIO lines happens elsewhere.
/// Commands a chipset lacks throw `ReceiverCommandError.notSupported`.
public protocol ReceiverDriver: Sendable {
    /// For people: `MediaTek MT3339 (PMTK)`.
    var chipset: String { get }
    /// What brings the receiver back from `standby()`.
    var standbyWake: WakeMethod { get }
    /// What brings the receiver back from `backup()`.
    var backupWake: WakeMethod { get }

    func standby() throws(ReceiverCommandError) -> ReceiverCommand
    /// Bytes that wake the receiver from standby (answered by any output).
    func wake() throws(ReceiverCommandError) -> ReceiverCommand
    func backup() throws(ReceiverCommandError) -> ReceiverCommand
    func setUpdateRate(milliseconds: Int) throws(ReceiverCommandError) -> ReceiverCommand
    func setBaudRate(_ rate: Int) throws(ReceiverCommandError) -> ReceiverCommand
    /// One or more commands that make the receiver output exactly these sentences.
    func configureSentences(_ rates: SentenceRates) throws(ReceiverCommandError) -> [ReceiverCommand]
    func queryVersion() throws(ReceiverCommandError) -> ReceiverCommand
}

extension ReceiverDriver {
    /// Whether `message` answers `command`, and how; nil when it is unrelated.
    public func acknowledgement(for command: ReceiverCommand, in message: ReceiverMessage) -> AckResult? {
        command.expectation.result(for: message)
    }
}

/// What it takes to wake a receiver; the GPIO side is done by the power layer.
public enum WakeMethod: Sendable, Hashable {
    /// Any byte on the receiver's UART RX wakes it (MT3339 after PMTK161; u-blox with the UART RX wake source).
    case anyByte
    /// Drive FORCE_ON high for at least `minimum` (Quectel L76X leaving PMTK225,4 backup: ≥ 100 ms).
    case forceOnPulse(minimum: Duration)
    /// Only removing and restoring power (or a reset) wakes it.
    case powerCycle
    /// Nothing to do: the receiver never sleeps.
    case none
}

public enum ReceiverCommandError: Error, Hashable, CustomStringConvertible {
    case notSupported(command: String, chipset: String)
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .notSupported(let command, let chipset):
            "\(chipset) has no '\(command)' command; choose the chipset with --chipset mediatek|ublox"
        case .invalidArgument(let reason):
            reason
        }
    }
}
