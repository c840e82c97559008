#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells systemd about the service's state (the `sd_notify` protocol), without linking libsystemd.
///
/// Reads `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket) and sends one datagram per
/// message. When the variable is absent (not started by systemd, or not `Type=notify`) every
/// message is a no-op.
public struct SystemdNotifier: Sendable {
    /// The socket address from `$NOTIFY_SOCKET`, nil when not running under systemd's notify.
    public let socketAddress: String?
    /// How often to send `watchdog()`: half of `$WATCHDOG_USEC`, nil when the watchdog is off
    /// or meant for another process (`$WATCHDOG_PID`).
    public let watchdogInterval: Duration?

    /// - Parameters:
    ///   - environment: the variables to read (injectable for tests); the process's by default.
    ///   - processID: this process, compared with `$WATCHDOG_PID`.
    public init(environment: [String: String] = SystemdNotifier.processEnvironment(), processID: Int32 = getpid()) {
        let socket = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketAddress = socket
        watchdogInterval = Self.watchdogInterval(environment: environment, processID: processID)
    }

    /// Whether messages go anywhere.
    public var isEnabled: Bool { socketAddress != nil }

    /// Startup finished: `READY=1`.
    public func ready() throws(SystemdNotifierError) { try send("READY=1") }

    /// Shutdown began: `STOPPING=1`.
    public func stopping() throws(SystemdNotifierError) { try send("STOPPING=1") }

    /// A one-line status for `systemctl status`: `STATUS=…` (newlines become spaces).
    public func status(_ text: String) throws(SystemdNotifierError) {
        let line = String(text.map { $0.isNewline ? " " : $0 })
        try send("STATUS=\(line)")
    }

    /// Still alive: `WATCHDOG=1`. Send every `watchdogInterval`.
    public func watchdog() throws(SystemdNotifierError) { try send("WATCHDOG=1") }

    /// Sends newline-separated assignments as one datagram; a no-op when `isEnabled` is false.
    public func send(_ message: String) throws(SystemdNotifierError) {
        guard let socketAddress else { return }
        var address = try Self.makeAddress(socketAddress)
        let descriptor = socket(AF_UNIX, Self.datagramType, 0)
        guard descriptor >= 0 else { throw .sendFailed(socket: socketAddress, reason: Self.lastError()) }
        defer { _ = close(descriptor) }
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address.storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                bytes.withUnsafeBytes { buffer in
                    sendto(descriptor, buffer.baseAddress, buffer.count, Self.sendFlags, sockaddrPointer, address.length)
                }
            }
        }
        guard sent == bytes.count else { throw .sendFailed(socket: socketAddress, reason: Self.lastError()) }
    }

    // MARK: - Helpers

    static func watchdogInterval(environment: [String: String], processID: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != processID { return nil }
        return .microseconds(usec / 2)
    }

    private struct Address {
        var storage = sockaddr_un()
        var length: socklen_t = 0
    }

    /// `@name` is an abstract socket (leading NUL, no terminator); anything else a filesystem path.
    private static func makeAddress(_ text: String) throws(SystemdNotifierError) -> Address {
        var path = Array(text.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract {
            path[0] = 0
        } else {
            guard path.first == UInt8(ascii: "/") else { throw .unsupportedAddress(text) }
            path.append(0)
        }
        var address = Address()
        let capacity = MemoryLayout.size(ofValue: address.storage.sun_path)
        guard path.count <= capacity else { throw .unsupportedAddress(text) }
        address.storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.storage.sun_path) { buffer in
            buffer.copyBytes(from: path)
        }
        address.length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2) + socklen_t(path.count)
        return address
    }

    #if os(Linux)
        private static let datagramType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
        private static let datagramType = SOCK_DGRAM
        private static let sendFlags: Int32 = 0
    #endif

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

extension SystemdNotifier {
    /// The variables the notifier reads, taken from the process environment.
    public static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        return environment
    }
}

/// Why a notification could not be delivered.
public enum SystemdNotifierError: Error, Equatable, CustomStringConvertible {
    /// `$NOTIFY_SOCKET` is neither a path nor `@abstract`, or longer than a socket address allows.
    case unsupportedAddress(String)
    case sendFailed(socket: String, reason: String)

    public var description: String {
        switch self {
        case let .unsupportedAddress(address):
            "unsupported NOTIFY_SOCKET '\(address)': expected an absolute path or @abstract-name of at most 107 bytes"
        case let .sendFailed(socket, reason):
            "cannot notify systemd on \(socket): \(reason)"
        }
    }
}
