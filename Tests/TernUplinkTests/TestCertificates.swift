import Foundation
import TernTesting

/// A CA and a server certificate for 127.0.0.1 and localhost signed by it, made with the `openssl`
/// command (EC P-256, valid 2 days) in `directory`: `ca.pem`, `server.pem`, `server.key`.
enum TestCertificates {
    static let openssl = "/usr/bin/openssl"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    static func make(in directory: URL) async throws {
        let path = { (name: String) in directory.appending(path: name).path }
        try Data("""
            subjectAltName=IP:127.0.0.1,DNS:localhost
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.utf8).write(to: directory.appending(path: "server.ext"))
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await run(["req", "-x509"] + key + [
            "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=Tern Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ], log: path("openssl.log"))
        try await run(["req", "-new"] + key + [
            "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost",
        ], log: path("openssl.log"))
        try await run([
            "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("server.ext"),
        ], log: path("openssl.log"))
    }

    private static func run(_ arguments: [String], log: String) async throws {
        let status = try await DaemonProcess(openssl, arguments, output: log).waitForExit()
        guard status == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw BrokerError(description: "openssl \(arguments.prefix(2).joined(separator: " ")) exited \(status): \(text.suffix(400))")
        }
    }
}
