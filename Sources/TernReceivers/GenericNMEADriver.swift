/// A receiver Tern only listens to: no commands, never sleeps by command.
public struct GenericNMEADriver: ReceiverDriver {
    public init() {}

    public var chipset: String { "generic NMEA receiver" }
    public var standbyWake: WakeMethod { .none }
    public var backupWake: WakeMethod { .none }

    public func standby() throws(ReceiverCommandError) -> ReceiverCommand { throw unsupported("standby") }
    public func wake() throws(ReceiverCommandError) -> ReceiverCommand { throw unsupported("wake") }
    public func backup() throws(ReceiverCommandError) -> ReceiverCommand { throw unsupported("backup") }

    public func setUpdateRate(milliseconds: Int) throws(ReceiverCommandError) -> ReceiverCommand {
        throw unsupported("rate")
    }

    public func setBaudRate(_ rate: Int) throws(ReceiverCommandError) -> ReceiverCommand { throw unsupported("baud") }

    public func configureSentences(_ rates: SentenceRates) throws(ReceiverCommandError) -> [ReceiverCommand] {
        throw unsupported("sentences")
    }

    public func queryVersion() throws(ReceiverCommandError) -> ReceiverCommand { throw unsupported("version") }

    private func unsupported(_ command: String) -> ReceiverCommandError {
        .notSupported(command: command, chipset: chipset)
    }
}
