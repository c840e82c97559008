import Foundation
import NIOCore
import NIOPosix
import Synchronization
import TernTesting
#if canImport(Glibc)
import Glibc
#endif

/// A mosquitto broker of the test's own: a free port on 127.0.0.1, its own config, persistence and log
/// in a temporary directory; started, stopped, restarted on the same port, paused.
final class Mosquitto: @unchecked Sendable {  // used by one test at a time
    static let path = "/usr/sbin/mosquitto"
    static let clients = ["/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_passwd"]
    /// Whether the broker and its clients are here (Debian: `apt-get install mosquitto mosquitto-clients`).
    static var isInstalled: Bool { ([path] + clients).allSatisfy(FileManager.default.isExecutableFile(atPath:)) }
    static let missing = "mosquitto is not installed: apt-get install mosquitto mosquitto-clients"

    let directory: URL
    let port: Int
    private var process: DaemonProcess?

    /// A broker whose config adds `config` (lines; `PORT` and `DIR` are replaced) to the listener.
    init(config: String = "allow_anonymous true") async throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "tern-mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try await Self.freePort()
        let lines = [
            "listener \(port) 127.0.0.1", "persistence true", "persistence_location \(directory.path)/",
            "max_queued_messages 0", "log_dest file \(directory.path)/mosquitto.log",
        ] + (geteuid() == 0 ? ["user root"] : [])
        let text = (lines + [config.replacingOccurrences(of: "DIR", with: directory.path)]).joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: configFile)
    }

    var configFile: URL { directory.appending(path: "mosquitto.conf") }
    var url: URL { URL(string: "mqtt://127.0.0.1:\(port)") ?? directory }

    /// Starts the broker and waits until it says it is running (its log, not a connection: another
    /// broker could answer on the port if this one failed to bind it).
    func start() async throws {
        let starts = log.components(separatedBy: " running").count
        let process = try DaemonProcess(Self.path, ["-c", configFile.path])
        self.process = process
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(5))
        while clock.now < deadline {
            if (try? await process.waitForExit(within: .zero)) != nil { break }
            if log.components(separatedBy: " running").count > starts { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        self.process = nil
        throw BrokerError(description: "mosquitto did not start on port \(port): \(log.suffix(600))")
    }

    /// SIGTERM: mosquitto saves its persistence file and exits.
    func stop() async throws {
        guard let process else { return }
        process.signal(SIGTERM)
        try await process.waitForExit()
        self.process = nil
    }

    /// SIGSTOP / SIGCONT: the broker stops answering but keeps its connections.
    func pause() { process?.signal(SIGSTOP) }
    func resume() { process?.signal(SIGCONT) }

    /// Stops the broker (SIGKILL if SIGTERM is not enough) and removes its directory.
    func remove() async {
        resume()
        await process?.stop()
        process = nil
        try? FileManager.default.removeItem(at: directory)
    }

    var log: String {
        (try? String(contentsOf: directory.appending(path: "mosquitto.log"), encoding: .utf8)) ?? "(no log)"
    }

    /// The next port of this test process's own that nothing listens on, below Linux's ephemeral
    /// range (32768-60999) so that no client connection takes it before the broker binds it.
    private static let nextPort = Mutex(Int.random(in: 20_000..<30_000))

    private static func freePort() async throws -> Int {
        for _ in 0..<100 {
            let port = nextPort.withLock { port in
                defer { port = port >= 32_000 ? 20_000 : port + 1 }
                return port
            }
            if let channel = try? await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(host: "127.0.0.1", port: port).get() {
                try await channel.close()
                return port
            }
        }
        throw BrokerError(description: "no free port for mosquitto in 20000-32000")
    }
}

struct BrokerError: Error, CustomStringConvertible {
    var description: String
}

/// `mosquitto_sub` holding a persistent QoS 1 session on `topic`, its messages one per line in a file
/// (it flushes each; its own errors go there too, and do not parse as positions).
final class Subscriber: @unchecked Sendable {  // used by one test at a time
    private let broker: Mosquitto
    private let arguments: [String]
    private let output: URL
    private var process: DaemonProcess?

    /// Creates the session and its subscription (the broker queues from now on), then starts receiving.
    init(broker: Mosquitto, topic: String, extra: [String] = []) async throws {
        self.broker = broker
        let id = "sub-\(UUID().uuidString.prefix(8))"
        arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic, "-q", "1", "-c", "-i", id] + extra
        output = broker.directory.appending(path: "\(id).txt")
        let status = try await DaemonProcess(Self.path, arguments + ["-E"]).waitForExit()
        guard status == 0 else {
            throw BrokerError(description: "mosquitto_sub -E exited \(status): \(broker.log.suffix(400))")
        }
        process = try DaemonProcess(Self.path, arguments, output: output.path)
    }

    /// The payloads received so far.
    var messages: [String] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The `tern_id` of each message received, repeats included.
    var ternIDs: [String] {
        messages.compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["tern_id"] as? String
        }
    }

    /// Waits until `count` distinct positions arrived (or `limit` passed); returns whether they did.
    func waitForDistinct(_ count: Int, within limit: Duration = .seconds(10)) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while clock.now < deadline {
            if Set(ternIDs).count >= count { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return Set(ternIDs).count >= count
    }

    func stop() async {
        await process?.stop()
        process = nil
    }

    private static let path = "/usr/bin/mosquitto_sub"
}
