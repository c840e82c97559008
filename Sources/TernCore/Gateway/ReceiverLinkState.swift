/// What Tern knows about the link to the GPS receiver, as an operator would want to hear it.
public enum ReceiverLinkState: Sendable, Hashable, CustomStringConvertible {
    /// Opening the device for the first time.
    case connecting
    /// The device is open and (as far as we can tell) sending NMEA.
    case connected
    /// The device went away or cannot be opened; Tern keeps trying.
    case gone(reason: String)
    /// Open and powered, but no byte for this long.
    case silent(seconds: Double)
    /// Mostly garbage and no valid sentence: probably the wrong baud rate.
    case wrongBaud
    /// Trying baud rates to find the one the receiver speaks.
    case autobauding

    /// A short name for scripts and metrics: connecting, connected, gone, silent, wrong_baud, autobauding.
    public var name: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .gone: "gone"
        case .silent: "silent"
        case .wrongBaud: "wrong_baud"
        case .autobauding: "autobauding"
        }
    }

    public var description: String {
        switch self {
        case .connecting:
            "connecting to the receiver"
        case .connected:
            "receiver connected"
        case let .gone(reason):
            "receiver gone (\(reason)); reconnecting"
        case let .silent(seconds):
            "receiver silent for \(Int(seconds.rounded())) s while powered: check its power, the TX wire and the baud rate"
        case .wrongBaud:
            "receiver sends garbage, probably at another baud rate: try --autobaud or set the right receiver.baud"
        case .autobauding:
            "scanning baud rates for valid NMEA"
        }
    }
}
