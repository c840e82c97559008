import NIOCore
import NIOPosix
import NIOSSL

/// Turns what NIO and NIOSSL report about a connection into an `MQTTFailure` that names the cause and
/// the fix: certificate problems are permanent (`uplink.ca_file`, the host in `uplink.url`); network
/// problems are retryable.
enum MQTTTransportError {
    static func classify(_ error: any Error, endpoint: MQTTEndpoint) -> MQTTFailure {
        switch error {
        case let error as NIOSSLError:
            if case .handshakeFailed = error {
                let text = "\(error)"
                if text.contains("CERTIFICATE_VERIFY_FAILED") {
                    return .permanent(
                        "the TLS certificate of \(endpoint) is not trusted (\(text)): set uplink.ca_file to the PEM file of the CA that signed it, or check the broker's certificate chain")
                }
                return .permanent(
                    "the TLS handshake with \(endpoint) failed (\(text)): check that it serves TLS on that port (mqtts://, usually 8883) and uplink.ca_file")
            }
            return .retryable("the TLS connection to \(endpoint) failed (\(error))")
        case let error as NIOSSLExtraError where "\(error)".contains("failedToValidateHostname"):
            return .permanent(
                "the TLS certificate of \(endpoint) is not for \(endpoint.host) (\(error)): use the host name the certificate names in uplink.url")
        case ChannelError.connectTimeout:
            return .retryable("could not connect to \(endpoint) in time: check the network and uplink.url")
        case let error as NIOConnectionError:
            return .retryable("cannot connect to \(endpoint) (\(describe(error))): is the broker running and reachable? check uplink.url")
        default:
            return .retryable("the connection to \(endpoint) failed (\(error))")
        }
    }

    /// The connection error's causes, without NIO's type names.
    private static func describe(_ error: NIOConnectionError) -> String {
        let causes = error.connectionErrors.map { "\($0.error)" }
            + [error.dnsAError, error.dnsAAAAError].compactMap { $0.map { "DNS: \($0)" } }
        return causes.isEmpty ? "\(error)" : causes.joined(separator: "; ")
    }
}
