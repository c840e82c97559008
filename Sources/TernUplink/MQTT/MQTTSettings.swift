import Foundation
import NIOCore
import NIOSSL

/// Where the broker is: `mqtt://HOST[:1883]` or `mqtts://HOST[:8883]` (TLS).
public struct MQTTEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var usesTLS: Bool

    /// Reads `uplink.url`.
    public init(url: URL) throws(UplinkConfigError) {
        let expected = "mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS), e.g. mqtts://broker.example:8883"
        guard let scheme = url.scheme?.lowercased(), scheme == "mqtt" || scheme == "mqtts",
              let host = url.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), !host.isEmpty
        else { throw UplinkConfigError(key: "uplink.url", found: url.absoluteString, expected: expected) }
        guard url.path.isEmpty || url.path == "/", url.query == nil else {
            throw UplinkConfigError(
                key: "uplink.url", found: url.absoluteString,
                expected: "\(expected), without a path or query (the topic is uplink.topic)")
        }
        self.host = host
        usesTLS = scheme == "mqtts"
        port = url.port ?? (usesTLS ? 8883 : 1883)
    }

    public var description: String { "broker \(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// The name to send in TLS SNI and check the certificate against; nil for an IP address (its
    /// certificate is checked against the address).
    var serverHostname: String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }
}

/// The MQTT settings `MQTTUplink` derives from `uplink.*`, checked once.
enum MQTTSettings {
    /// `uplink.topic`, or `owntracks/USER/DEVICE` (USER: `uplink.username`, else `tern`).
    static func topic(configured: String?, username: String?, device: String) throws(UplinkConfigError) -> String {
        guard let configured, !configured.isEmpty else { return "owntracks/\(username ?? "tern")/\(device)" }
        guard !configured.contains(where: { $0 == "+" || $0 == "#" || $0 == "\u{0}" }),
              configured.utf8.count <= Int(UInt16.max)
        else {
            throw UplinkConfigError(
                key: "uplink.topic", found: configured,
                expected: "a topic to publish to, without the wildcards + and #, e.g. owntracks/alice/pi")
        }
        return configured
    }

    /// The CONNECT credentials from `uplink.username` and `uplink.password` (MQTT allows no password alone).
    static func credentials(username: String?, password: String?) throws(UplinkConfigError) -> (String?, [UInt8]?) {
        let user = username.flatMap { $0.isEmpty ? nil : $0 }
        let secret = password.flatMap { $0.isEmpty ? nil : $0 }
        if user == nil, secret != nil {
            throw UplinkConfigError(key: "uplink.username", "is empty but uplink.password is set: MQTT sends a password only with a user name")
        }
        if let user, user.utf8.count > Int(UInt16.max) || user.contains("\u{0}") {
            throw UplinkConfigError(key: "uplink.username", "must be at most 65535 bytes of UTF-8 without NUL")
        }
        if let secret, secret.utf8.count > Int(UInt16.max) {
            throw UplinkConfigError(key: "uplink.password", "must be at most 65535 bytes")
        }
        return (user, secret.map { Array($0.utf8) })
    }

    /// The TLS context for `mqtts`: the system's trusted CAs, or only the CAs in `caFile` (PEM).
    static func tlsContext(endpoint: MQTTEndpoint, caFile: String?) throws(UplinkConfigError) -> NIOSSLContext? {
        let caFile = caFile.flatMap { $0.isEmpty ? nil : $0 }
        guard endpoint.usesTLS else {
            if let caFile {
                throw UplinkConfigError(
                    key: "uplink.ca_file", "is set (\(caFile)) but uplink.url is mqtt://, without TLS: use mqtts:// or remove uplink.ca_file")
            }
            return nil
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        do {
            if let caFile {
                guard FileManager.default.isReadableFile(atPath: caFile) else {
                    throw UplinkConfigError(key: "uplink.ca_file", "cannot read \(caFile): check the path and its permissions")
                }
                let certificates = try NIOSSLCertificate.fromPEMFile(caFile)
                guard !certificates.isEmpty else {
                    throw UplinkConfigError(key: "uplink.ca_file", "\(caFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
                }
                configuration.trustRoots = .certificates(certificates)
            }
            return try NIOSSLContext(configuration: configuration)
        } catch let error as UplinkConfigError {
            throw error
        } catch {
            throw UplinkConfigError(
                key: "uplink.ca_file", "cannot use \(caFile ?? "the system's CA certificates") for TLS (\(error)): give a PEM file of the CA that signed the broker's certificate")
        }
    }
}
