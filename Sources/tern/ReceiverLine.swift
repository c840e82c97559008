import Foundation
import TernApp
import TernHardware

/// Where `tern receiver` and `tern nmea tail` talk to the receiver: the UART itself, or, while `tern
/// run` holds it, the daemon's control socket (its tap of the receiver's bytes; writes go through the
/// daemon). Root is never left to share the UART with the daemon silently.
protocol ReceiverLine: Sendable {
    func write(_ bytes: [UInt8]) async throws
    /// The next bytes from the receiver; empty when the line ended.
    func read(maxCount: Int) async throws -> [UInt8]
    func close() async
}

extension TermiosSerialPort: ReceiverLine {}

/// The receiver through the daemon: each `write` is a request, every byte the daemon reads is tapped.
final class DaemonLine: ReceiverLine, @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var clients: [ControlClient] = []
    private let stream: AsyncStream<[UInt8]>
    private let feed: AsyncStream<[UInt8]>.Continuation
    private var iterator: AsyncStream<[UInt8]>.AsyncIterator?

    /// Taps the daemon at `path`; nil when no daemon answers there (`error` says why, when it is permissions).
    init?(path: String, error: inout String?) {
        guard let client = ControlClient(path: path, error: &error) else { return nil }
        self.path = path
        (stream, feed) = AsyncStream.makeStream(of: [UInt8].self)
        iterator = stream.makeAsyncIterator()
        listen(client, ControlMessage(command: "tap"))
    }

    private func listen(_ client: ControlClient, _ request: ControlMessage) {
        lock.withLock { clients.append(client) }
        let feed = feed
        Task {
            for await message in client.send(request) {
                if let text = message.bytes, let bytes = Data(base64Encoded: text) { feed.yield(Array(bytes)) }
                if let error = message.error { FileHandle.standardError.write(Data("tern: the daemon says: \(error)\n".utf8)) }
            }
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        var error: String?
        guard let client = ControlClient(path: path, error: &error) else { throw CocoaError(.fileWriteUnknown) }
        // Its answer comes back through the tap already open; this connection only carries the write.
        lock.withLock { clients.append(client) }
        for await message in client.send(ControlMessage(command: "write", bytes: Data(bytes).base64EncodedString())) {
            if message.written != nil { return }
            if let failure = message.error { throw ValidationError(failure) }
        }
    }

    func read(maxCount: Int) async throws -> [UInt8] {
        var iterator = lock.withLock { self.iterator }
        let next = await iterator?.next() ?? []
        lock.withLock { self.iterator = iterator }
        return next
    }

    func close() async {
        feed.finish()
        lock.withLock { clients.removeAll() }
    }
}

import ArgumentParser

/// Finds the daemon's control socket: `--control-socket`, else the config's, else the default.
enum ControlSocketPath {
    static func resolve(explicit: String?, config: String) -> String {
        if let explicit { return explicit }
        if let loaded = try? TernConfig.load(path: config) { return loaded.controlSocket }
        return TernConfig.defaultControlSocket
    }

    /// The UART to open when none was named: the config's receiver device, else /dev/serial0.
    static func defaultDevice(config: String) -> String {
        if let loaded = try? TernConfig.load(path: config), case let .serial(device, _) = loaded.receiver { return device }
        return "/dev/serial0"
    }

    /// Refuses a UART that another process holds (root bypasses TIOCEXCL: both would read the same
    /// port and steal each other's bytes), naming it; `force` overrides.
    static func refuseIfHeld(_ device: String, force: Bool) throws {
        guard !force, let resolved = Doctor.resolve(device) else { return }
        let holders = Doctor.holders(of: resolved, procRoot: "/proc").filter { $0.pid != getpid() }
        guard let holder = holders.first else { return }
        throw ValidationError(
            "\(device) is open in \(holder.name) (pid \(holder.pid)): reading it too would steal its bytes. "
                + (holder.name == "tern" ? "Run without --device to go through the daemon (its control socket), " : "Stop it, ")
                + "or pass --force to share the port anyway")
    }
}
