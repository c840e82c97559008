import NIOCore
import NIOPosix
import NIOSSL

/// Turns what NIO and NIOSSL report about a connection into an `MQTTFailure` that names the cause and
/// the fix: certificate problems are permanent (`uplink.ca_file`, the host in `uplink.url`); network
/// problems are retryable.
enum MQTTTransportError {
    static func classify(_ error: any Error, endpoint: MQTTEndpoint, duringTLSHandshake: Bool = false) -> MQTTFailure {
        switch error {
        case let error as NIOSSLError:
            if case .handshakeFailed = error {
                let reason = boringSSLReason(error)
                if reason.contains("CERTIFICATE_VERIFY_FAILED") {
                    return .permanent(
                        "the TLS certificate of \(endpoint) is not trusted (\(reason)): set uplink.ca_file to the PEM file of the CA that signed it, or check the broker's certificate chain")
                }
                return .permanent(
                    "the TLS handshake with \(endpoint) failed (\(reason)): check that it serves TLS on that port (mqtts://, usually 8883) and uplink.ca_file")
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
            if duringTLSHandshake { return endedDuringTLSHandshake("\(error)", endpoint: endpoint) }
            return .retryable("the connection to \(endpoint) failed (\(error))")
        }
    }

    /// The broker hung up before the TLS handshake completed: a network fault, or no TLS on that port
    /// (a plain MQTT listener resets a TLS hello). Retryable, as a fault would be, with the likely fix.
    static func endedDuringTLSHandshake(_ cause: String, endpoint: MQTTEndpoint) -> MQTTFailure {
        .retryable(
            "the connection to \(endpoint) ended during the TLS handshake (\(cause)): if this repeats, check that it serves TLS on that port (mqtts://, usually 8883; mqtt:// for plain 1883)")
    }

    /// BoringSSL's reason code (`CERTIFICATE_VERIFY_FAILED`), or the whole error when there is none.
    private static func boringSSLReason(_ error: NIOSSLError) -> String {
        let text = "\(error)"
        guard let marker = text.range(of: "OPENSSL_internal:") else { return text }
        return String(text[marker.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" })
    }

    /// The connection error's causes, without NIO's type names.
    private static func describe(_ error: NIOConnectionError) -> String {
        let causes = error.connectionErrors.map { "\($0.error)" }
            + [error.dnsAError, error.dnsAAAAError].compactMap { $0.map { "DNS: \($0)" } }
        return causes.isEmpty ? "\(error)" : causes.joined(separator: "; ")
    }
}
