import Foundation
import Testing

@testable import TernGateway

#if canImport(Glibc)
    import Glibc
#endif

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket.
private final class NotifySocket {
    let address: String
    private let descriptor: Int32
    private let directory: URL?

    /// Binds a path socket in a fresh temporary directory, or an abstract one when `abstract`.
    init(abstract: Bool = false) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        self.descriptor = descriptor
        let path: String
        if abstract {
            directory = nil
            path = "\0tern-test-\(UUID().uuidString)"
            address = "@" + path.dropFirst()
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-notify-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            path = directory.appendingPathComponent("notify").path
            address = path
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2) + socklen_t(bytes.count + (abstract ? 0 : 1))
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        close(descriptor)
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The next datagram, or nil after a 5 s timeout.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}

@Suite(.timeLimit(.minutes(1))) struct SystemdNotifierTests {
    @Test func readySendsReadyToAPathSocket() throws {
        let socket = try NotifySocket()
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])

        try sut.ready()

        #expect(socket.receive() == "READY=1")
    }

    @Test func stoppingSendsStopping() throws {
        let socket = try NotifySocket()
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])

        try sut.stopping()

        #expect(socket.receive() == "STOPPING=1")
    }

    @Test func statusSendsTheText() throws {
        let socket = try NotifySocket()
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])

        try sut.status("tracking, 3 queued")

        #expect(socket.receive() == "STATUS=tracking, 3 queued")
    }

    @Test func statusFlattensNewlines() throws {
        let socket = try NotifySocket()
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])

        try sut.status("line one\nREADY=1")

        #expect(socket.receive() == "STATUS=line one READY=1")
    }

    @Test func watchdogSendsWatchdog() throws {
        let socket = try NotifySocket()
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])

        try sut.watchdog()

        #expect(socket.receive() == "WATCHDOG=1")
    }

    @Test func readySendsReadyToAnAbstractSocket() throws {
        let socket = try NotifySocket(abstract: true)
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])

        try sut.ready()

        #expect(socket.receive() == "READY=1")
    }

    @Test func isDisabledWithoutNotifySocket() {
        let sut = SystemdNotifier(environment: [:])

        #expect(!sut.isEnabled)
    }

    @Test func sendingWithoutNotifySocketIsANoOp() throws {
        let sut = SystemdNotifier(environment: [:])

        try sut.ready()
    }

    @Test func sendingToAMissingSocketThrows() {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("tern-missing-\(UUID().uuidString)").path
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": missing])

        #expect(throws: SystemdNotifierError.self) { try sut.ready() }
    }

    @Test func nonPathSocketAddressIsUnsupported() {
        let sut = SystemdNotifier(environment: ["NOTIFY_SOCKET": "vsock:2:1234"])

        #expect(throws: SystemdNotifierError.unsupportedAddress("vsock:2:1234")) { try sut.ready() }
    }

    @Test func watchdogIntervalIsHalfOfWatchdogUsec() {
        let sut = SystemdNotifier(environment: ["WATCHDOG_USEC": "60000000"])

        #expect(sut.watchdogInterval == .seconds(30))
    }

    @Test func watchdogIntervalIsNilWithoutWatchdogUsec() {
        let sut = SystemdNotifier(environment: [:])

        #expect(sut.watchdogInterval == nil)
    }

    @Test func watchdogIntervalIsNilWhenMeantForAnotherProcess() {
        let sut = SystemdNotifier(environment: ["WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "1"], processID: 4242)

        #expect(sut.watchdogInterval == nil)
    }

    @Test func watchdogIntervalAppliesWhenMeantForThisProcess() {
        let sut = SystemdNotifier(environment: ["WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "4242"], processID: 4242)

        #expect(sut.watchdogInterval == .seconds(30))
    }
}
