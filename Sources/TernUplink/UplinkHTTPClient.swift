import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// How the HTTP uplinks connect: timeouts Tern controls, TLS and a proxy.
public struct UplinkHTTPSettings: Sendable, Hashable {
    /// Connecting (TCP and TLS) may take this long.
    public var connectTimeout: Duration
    /// No byte from the server for this long fails the request (async-http-client's own deadline stops
    /// counting once the response headers arrive: this one does not).
    public var readTimeout: Duration
    /// A PEM file of the CA certificates to trust instead of the system's (a private server); nil: the
    /// system's trust store. Verification is never off.
    public var caFile: String?
    /// `host:port` of an HTTP proxy; nil: from `https_proxy` / `http_proxy` (honouring `no_proxy`).
    public var proxy: String?

    public init(connectTimeout: Duration = .seconds(10), readTimeout: Duration = .seconds(30), caFile: String? = nil, proxy: String? = nil) {
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.caFile = caFile
        self.proxy = proxy
    }

    /// The client configuration for uploading to `url`, the one every uplink and `tern doctor` use:
    /// - redirects are never followed: a 3xx comes back as the answer, and is a failure that names
    ///   its target (`ResponseClassifier.redirect`), because a followed 301/302 to a POST turns into
    ///   a GET without the positions, and a captive portal's page would then count as delivered;
    /// - a failed connect (refused, no route, DNS) fails the attempt at once instead of being retried
    ///   inside the client until the timeout, so the forwarder's own backoff decides when to try again.
    /// Throws when the CA file cannot be used.
    public func clientConfiguration(for url: URL?, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> HTTPClient.Configuration
    {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .nanoseconds(connectTimeout.nanoseconds), read: .nanoseconds(readTimeout.nanoseconds))
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw UplinkSetupError.caFile(path: caFile, reason: "\(error)")
            }
        }
        configuration.tlsConfiguration = tls
        if let (host, port) = Self.proxy(for: url, explicit: proxy, environment: environment) {
            configuration.proxy = .server(host: host, port: port)
        }
        return configuration
    }

    /// The proxy for `url`: the explicit one, else the scheme's environment variable unless `no_proxy`
    /// names the host (or a domain suffix of it, or `*`).
    static func proxy(for url: URL?, explicit: String?, environment: [String: String]) -> (String, Int)? {
        let scheme = url?.scheme ?? "https"
        let host = url?.host ?? ""
        let name = scheme == "https" ? "https_proxy" : "http_proxy"
        guard let value = explicit ?? environment[name] ?? environment[name.uppercased()], !value.isEmpty else { return nil }
        if explicit == nil, let noProxy = environment["no_proxy"] ?? environment["NO_PROXY"] {
            for entry in noProxy.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
                if entry == "*" || host == entry || host.hasSuffix(entry.hasPrefix(".") ? entry : "." + entry) { return nil }
            }
        }
        let text = value.contains("://") ? value : "http://" + value
        guard let proxyURL = URL(string: text), let proxyHost = proxyURL.host else { return nil }
        return (proxyHost, proxyURL.port ?? 3128)
    }
}

/// An uplink that cannot be set up as configured.
public enum UplinkSetupError: Error, CustomStringConvertible, Equatable {
    case caFile(path: String, reason: String)

    public var description: String {
        switch self {
        case let .caFile(path, reason):
            "cannot use uplink.ca_file \(path) (\(reason)): it must be a readable PEM file of CA certificates"
        }
    }
}
