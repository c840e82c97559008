/// MediaTek MT3339 (Adafruit Ultimate GPS, PA1616S) and Quectel L76X (Waveshare L76X HAT): PMTK packets.
///
/// Ranges and behaviour from the "MTK NMEA Packet User Manual" and the Quectel "L76 Series GNSS Protocol
/// Specification" / "L76 Hardware Design" (FORCE_ON).
public struct MediaTekDriver: ReceiverDriver {
    public enum Model: Sendable, Hashable {
        case mt3339
        case quectelL76X
    }

    /// Baud rates PMTK251 accepts that Tern's serial port can also use.
    public static let baudRates: Set<Int> = [4800, 9600, 19200, 38400, 57600, 115_200]

    public let model: Model

    public init(model: Model = .mt3339) {
        self.model = model
    }

    public var chipset: String {
        switch model {
        case .mt3339: "MediaTek MT3339 (PMTK)"
        case .quectelL76X: "Quectel L76X (PMTK)"
        }
    }

    public var standbyWake: WakeMethod { .anyByte }

    /// The L76X leaves PMTK225,4 backup on a FORCE_ON pulse; the Adafruit breakout has no FORCE_ON,
    /// so the MT3339 there needs its EN line (or supply) cycled.
    public var backupWake: WakeMethod {
        switch model {
        case .mt3339: .powerCycle
        case .quectelL76X: .forceOnPulse(minimum: .milliseconds(100))
        }
    }

    public func standby() -> ReceiverCommand {
        ReceiverCommand(.standby)
    }

    /// PMTK000: its first byte wakes the receiver, which then resumes NMEA output.
    public func wake() -> ReceiverCommand {
        ReceiverCommand(.test, expectation: .anyMessage)
    }

    /// PMTK225,4: perpetual backup, no reply expected.
    public func backup() -> ReceiverCommand {
        ReceiverCommand(.powerMode(.perpetualBackup), expectation: .nothing)
    }

    public func setUpdateRate(milliseconds: Int) throws(ReceiverCommandError) -> ReceiverCommand {
        guard (100...10_000).contains(milliseconds) else {
            throw .invalidArgument("PMTK220 takes a fix interval of 100…10000 ms, got \(milliseconds)")
        }
        return ReceiverCommand(.setFixInterval(milliseconds: milliseconds))
    }

    /// PMTK251: the receiver switches at once and sends no PMTK001; reopen the port at `rate`.
    public func setBaudRate(_ rate: Int) throws(ReceiverCommandError) -> ReceiverCommand {
        guard Self.baudRates.contains(rate) else {
            throw .invalidArgument("baud rate must be one of \(Self.baudRates.sorted()), got \(rate)")
        }
        return ReceiverCommand(.setBaudRate(rate), expectation: .nothing)
    }

    public func configureSentences(_ rates: SentenceRates) -> [ReceiverCommand] {
        [ReceiverCommand(.setSentenceOutput(rates))]
    }

    /// PMTK605, answered by `$PMTK705`.
    public func queryVersion() -> ReceiverCommand {
        ReceiverCommand(.queryFirmware, expectation: .pmtkReply(packetType: 605, type: "MTK705"))
    }
}
