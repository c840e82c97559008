import Foundation

extension TernConfig {
    /// What makes this config a template rather than this tracker's own: a placeholder server, a
    /// device name every board shares. The service refuses to run on it (`ServiceGate`).
    public var placeholders: [String] {
        var placeholders: [String] = []
        if let host = uplink.url?.host?.lowercased(), Self.isPlaceholderHost(host) {
            placeholders.append("uplink.url points at \(host), a placeholder (RFC 2606): set your server's address")
        }
        if DeviceIdentity.stockHostNames.contains(device.lowercased()) || ["pi-gps-01"].contains(device.lowercased()) {
            placeholders.append(
                "device is \"\(device)\", a name many boards share: the server would mix their positions; set device to a name of this board's own")
        }
        return placeholders
    }

    /// What is valid but probably wrong in this config: the placeholders, then what works but costs
    /// energy or exposure. Each a sentence naming the key and the fix.
    public var warnings: [String] {
        var warnings = placeholders
        if case .serial = receiver, power == .none {
            warnings.append("power.method is \"none\": the receiver stays powered and the scheduler cannot save energy (see board/*.toml for the HAT's method)")
        }
        if let listen = metrics.listen, !["127.0.0.1", "::1", "localhost"].contains(listen.host) {
            warnings.append(
                "metrics.listen is \(listen.host):\(listen.port), reachable from the network without authentication: use 127.0.0.1 and scrape through an SSH tunnel or a local Prometheus, or firewall the port")
        }
        if let secrets = secretsWorldReadable {
            warnings.append("\(secrets) holds a secret and is readable by every user: chmod 640 \(secrets) && chgrp tern \(secrets)")
        }
        if let cleartext = credentialsInClearText { warnings.append(cleartext) }
        return warnings
    }

    /// A token or a password that would cross the network unencrypted (`http://`, `mqtt://`): anyone
    /// on the path (a public Wi-Fi, a mobile operator's proxy) reads it.
    var credentialsInClearText: String? {
        guard let scheme = uplink.url?.scheme?.lowercased(), ["http", "mqtt"].contains(scheme) else { return nil }
        let secrets = [uplink.token.map { _ in "uplink.token" }, uplink.password.map { _ in "uplink.password" }].compactMap { $0 }
        guard !secrets.isEmpty else { return nil }
        let secure = scheme == "http" ? "https://" : "mqtts://"
        return "\(secrets.joined(separator: " and ")) would be sent unencrypted over \(scheme)://: use a \(secure) uplink.url "
            + "(anyone on the path reads \(secrets.count == 1 ? "it" : "them"))"
    }

    /// RFC 2606's reserved example domains and TLD.
    static func isPlaceholderHost(_ host: String) -> Bool {
        ["example.com", "example.org", "example.net"].contains(where: { host == $0 || host.hasSuffix("." + $0) }) || host.hasSuffix(".example")
    }
}
