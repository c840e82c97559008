/// u-blox receivers (Uputronics HAT: M8; also M9/M10) over UBX.
///
/// M8 uses CFG-PRT / CFG-MSG / CFG-RATE (UBX-13003221); generation 9+ uses CFG-VALSET
/// (u-blox M9 Interface Description, UBX-21022436). Both sleep with RXM-PMREQ.
public struct UBloxDriver: ReceiverDriver {
    public enum Generation: Sendable, Hashable {
        /// u-blox 6/7/M8: CFG-PRT, CFG-MSG, CFG-RATE.
        case m8
        /// M9, M10, F9: CFG-VALSET.
        case gen9
    }

    public let generation: Generation

    public init(generation: Generation = .m8) {
        self.generation = generation
    }

    public var chipset: String {
        generation == .m8 ? "u-blox M8 (UBX)" : "u-blox M9/M10 (UBX, CFG-VALSET)"
    }

    public var standbyWake: WakeMethod { .anyByte }
    public var backupWake: WakeMethod { .anyByte }

    /// RXM-PMREQ, software backup until woken by UART RX; no reply (the receiver sleeps at once).
    public func standby() -> ReceiverCommand {
        ReceiverCommand(UBXMessages.backup(milliseconds: 0, wakeSources: .uartRX), expectation: .nothing)
    }

    /// 0xFF bytes: the RX edge wakes the receiver (the bytes themselves are lost), which resumes output.
    public func wake() -> ReceiverCommand {
        ReceiverCommand(bytes: [UInt8](repeating: 0xFF, count: 8), summary: "8 × 0xFF", expectation: .anyMessage)
    }

    /// RXM-PMREQ backup until UART RX or EXTINT0.
    public func backup() -> ReceiverCommand {
        ReceiverCommand(UBXMessages.backup(milliseconds: 0, wakeSources: [.uartRX, .extInt0]), expectation: .nothing)
    }

    public func setUpdateRate(milliseconds: Int) throws(ReceiverCommandError) -> ReceiverCommand {
        guard (25...10_000).contains(milliseconds) else {
            throw .invalidArgument("the measurement period must be 25…10000 ms, got \(milliseconds)")
        }
        switch generation {
        case .m8: return ReceiverCommand(UBXMessages.setMeasurementRate(milliseconds: UInt16(milliseconds)))
        case .gen9: return ReceiverCommand(UBXMessages.setValues([(.rateMeasurement, UInt64(milliseconds))]))
        }
    }

    /// UART1 at `rate`, UBX and NMEA in and out. The switch loses the ACK, so none is awaited.
    public func setBaudRate(_ rate: Int) throws(ReceiverCommandError) -> ReceiverCommand {
        guard MediaTekDriver.baudRates.contains(rate) else {
            throw .invalidArgument("baud rate must be one of \(MediaTekDriver.baudRates.sorted()), got \(rate)")
        }
        let frame =
            switch generation {
            case .m8: UBXMessages.configureUART1(baudRate: rate)
            case .gen9: UBXMessages.setValues([(.uart1BaudRate, UInt64(rate))])
            }
        return ReceiverCommand(frame, expectation: .nothing)
    }

    /// Every standard sentence is set: listed ones to their rate, the others to 0.
    public func configureSentences(_ rates: SentenceRates) -> [ReceiverCommand] {
        switch generation {
        case .m8:
            NMEASentenceKind.allCases.map {
                ReceiverCommand(UBXMessages.setMessageRate($0, rate: UInt8(clamping: rates[$0])))
            }
        case .gen9:
            [
                ReceiverCommand(
                    UBXMessages.setValues(NMEASentenceKind.allCases.map { (.nmeaOutputUART1($0), UInt64(rates[$0])) }))
            ]
        }
    }

    /// MON-VER poll, answered by MON-VER.
    public func queryVersion() -> ReceiverCommand {
        let poll = UBXMessages.pollVersion
        return ReceiverCommand(poll, expectation: .ubxFrame(messageClass: poll.messageClass, messageID: poll.messageID))
    }
}
