import Foundation

/// A CA and a server certificate for 127.0.0.1 and localhost signed by it, made with the `openssl`
/// command (EC P-256, valid 2 days) in `directory`: `ca.pem`, `server.pem`, `server.key` (tests and
/// `tern-bench hostile`). `names` replaces the server's subjectAltName; `days` -1 makes it expired
/// (its not-after a day before its not-before).
public enum TestCertificates {
    public static let openssl = "/usr/bin/openssl"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    public static func make(in directory: URL, names: String = "IP:127.0.0.1,DNS:localhost", days: Int = 2) async throws {
        let path = { (name: String) in directory.appending(path: name).path }
        try Data("""
            subjectAltName=\(names)
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
            "-CAcreateserial", "-out", path("server.pem"), "-days", "\(days)", "-extfile", path("server.ext"),
        ], log: path("openssl.log"))
    }

    private static func run(_ arguments: [String], log: String) async throws {
        let status = try await DaemonProcess(openssl, arguments, output: log).waitForExit()
        guard status == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw DaemonProcessError(description: "openssl \(arguments.prefix(2).joined(separator: " ")) exited \(status): \(text.suffix(400))")
        }
    }
}
