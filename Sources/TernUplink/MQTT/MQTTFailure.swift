import TernCore

/// Why a connection to the broker failed or ended: retryable (the network, the broker restarting) or
/// permanent (our configuration: a human must fix it). Each reason names the cause and the fix.
public enum MQTTFailure: Error, Sendable, Hashable, CustomStringConvertible {
    case retryable(String)
    case permanent(String)

    public var reason: String {
        switch self {
        case let .retryable(reason), let .permanent(reason): reason
        }
    }

    public var description: String { reason }

    /// The failure as an uplink outcome.
    public var uplinkResult: UplinkResult {
        switch self {
        case let .retryable(reason): .retryable(reason: reason)
        case let .permanent(reason): .permanent(reason: reason)
        }
    }

    /// What a refused CONNACK means for a client named `clientID`.
    static func refused(_ code: MQTTConnectReturnCode, broker: String, clientID: String) -> MQTTFailure {
        let answer = "\(broker) refused the connection with CONNACK \(code)"
        switch code {
        case .accepted, .serverUnavailable:
            return .retryable("\(answer): the broker is up but not serving; retrying")
        case .unacceptableProtocolVersion:
            return .permanent("\(answer): it does not speak MQTT 3.1.1: check uplink.url or upgrade the broker")
        case .identifierRejected:
            return .permanent("\(answer) for client id \"\(clientID)\": check `device` (the client id is tern-DEVICE) and the broker's client id rules")
        case .badUsernameOrPassword:
            return .permanent("\(answer): check uplink.username and uplink.password")
        case .notAuthorized:
            return .permanent("\(answer): check uplink.username and uplink.password, and that the broker lets that user connect")
        }
    }
}
