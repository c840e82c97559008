import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A client of the daemon's control socket (`ControlServer`): sends one request and reads the lines
/// that come back, on a thread of its own (the reads block).
public final class ControlClient: @unchecked Sendable {
    private let fd: Int32

    /// Connects to the socket at `path`; nil when nobody listens there (no daemon, or no permission:
    /// `error` says which).
    public init?(path: String, error: inout String?) {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(socket)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            if errno == EACCES { error = "no permission to use \(path): run as root or as a member of the tern group" }
            close(socket)
            return nil
        }
        fd = socket
    }

    deinit { close(fd) }

    /// Sends `request` and yields every message that comes back until the daemon closes the connection
    /// or the stream is dropped.
    public func send(_ request: ControlMessage) -> AsyncStream<ControlMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: ControlMessage.self)
        let line = Array((request.line ?? "\n").utf8)
        let fd = fd
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, line.count) }
        let thread = Thread { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(self.fd, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    if let message = ControlMessage.parse(String(decoding: pending[..<newline], as: UTF8.self)) {
                        continuation.yield(message)
                    }
                    pending.removeSubrange(...newline)
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in shutdown(fd, Int32(SHUT_RDWR)) }
        thread.start()
        return stream
    }
}
