import Dispatch
import Glibc
import Synchronization
import TernCore

/// A UART (or PTY) opened and configured with termios: raw 8N1, no flow control, non-blocking.
///
/// Reads and writes never block a thread: on `EAGAIN` the caller suspends until a
/// `DispatchSource` reports the device ready, and a cancelled task stops waiting at once.
/// Hang-up (read returning 0, `EIO`) throws `SerialPortError.disconnected`.
public final class TermiosSerialPort: SerialPort, BaudRateConfigurable {
    /// The baud rates Tern configures, with their termios constants.
    public static let supportedBaudRates: [Int: speed_t] = [
        4800: speed_t(B4800), 9600: speed_t(B9600), 19200: speed_t(B19200),
        38400: speed_t(B38400), 57600: speed_t(B57600), 115_200: speed_t(B115200),
    ]

    public let path: String
    /// The rate the line is configured for (changed by `setBaudRate(_:)`).
    public var baudRate: Int { state.withLock { $0.baudRate } }

    private let state: Mutex<State>
    private let queue: DispatchQueue

    private struct State {
        /// -1 once closed.
        var fd: Int32
        var baudRate: Int
        var waits: [ObjectIdentifier: SerialReadinessWait] = [:]
        var syscalls = 0
    }

    /// read/write system calls made so far: a diagnostic that shows waiting costs no calls (no polling).
    public var syscallCount: Int { state.withLock { $0.syscalls } }

    private enum Attempt<Value: Sendable>: Sendable {
        case done(Value)
        case wait(SerialReadinessWait)
        case retry
        case failed(SerialPortError)
    }

    /// Opens `path` exclusively and configures it for raw 8N1 at `baudRate`.
    ///
    /// Throws `SerialPortError.unsupportedBaudRate`, `.cannotOpen` (with the likely fix in
    /// its reason) or `.notATerminal`.
    public static func open(path: String, baudRate: Int) throws(SerialPortError) -> TermiosSerialPort {
        guard let speed = supportedBaudRates[baudRate] else { throw .unsupportedBaudRate(baudRate) }
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SerialOpenError.cannotOpen(path, errno: errno) }
        do {
            try configure(fd: fd, path: path, speed: speed)
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        return TermiosSerialPort(fd: fd, path: path, baudRate: baudRate)
    }

    private init(fd: Int32, path: String, baudRate: Int) {
        self.state = Mutex(State(fd: fd, baudRate: baudRate))
        self.path = path
        self.queue = DispatchQueue(label: "tern.serial")
    }

    deinit {
        closeNow()
    }

    /// Raw mode, 8N1, receiver on, modem lines ignored, no flow control, `VMIN=1 VTIME=0`.
    ///
    /// `VMIN=1` (not 0): with `VMIN=0 VTIME=0` Linux returns 0 from `read` when no byte is
    /// waiting, which is indistinguishable from hang-up; with `VMIN=1` and `O_NONBLOCK` an empty
    /// buffer gives `EAGAIN` and 0 means end of file.
    private static func configure(fd: Int32, path: String, speed: speed_t) throws(SerialPortError) {
        guard isatty(fd) == 1 else { throw .notATerminal(path: path) }
        if ioctl(fd, UInt(TIOCEXCL)) != 0, errno != ENOTTY {
            throw SerialOpenError.cannotOpen(path, errno: errno)
        }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else { throw .notATerminal(path: path) }
        cfmakeraw(&options)
        options.c_cflag &= ~(tcflag_t(CSIZE) | tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
        options.c_cflag |= tcflag_t(CS8) | tcflag_t(CLOCAL) | tcflag_t(CREAD)
        options.c_iflag &= ~(tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(IXANY))
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard cfsetispeed(&options, speed) == 0, cfsetospeed(&options, speed) == 0,
            tcsetattr(fd, TCSANOW, &options) == 0
        else {
            throw .cannotOpen(path: path, reason: "cannot configure the line: \(SerialOpenError.describe(errno: errno))")
        }
    }

    /// Reconfigures the open line to `baudRate` (for autobaud) and discards bytes received so far.
    ///
    /// Throws `.unsupportedBaudRate`, `.closed`, or `.disconnected` when the device is gone.
    public func setBaudRate(_ baudRate: Int) throws(SerialPortError) {
        guard let speed = Self.supportedBaudRates[baudRate] else { throw .unsupportedBaudRate(baudRate) }
        try state.withLock { (state: inout State) throws(SerialPortError) in
            guard state.fd >= 0 else { throw .closed }
            var options = termios()
            guard tcgetattr(state.fd, &options) == 0, cfsetispeed(&options, speed) == 0,
                cfsetospeed(&options, speed) == 0, tcsetattr(state.fd, TCSANOW, &options) == 0
            else {
                let code = errno
                if [EIO, ENXIO, ENODEV].contains(code) { throw .disconnected(path: path) }
                throw .io(path: path, reason: "cannot set \(baudRate) baud: \(SerialOpenError.describe(errno: code))")
            }
            _ = tcflush(state.fd, TCIFLUSH)
            state.baudRate = baudRate
        }
    }

    public func read(maxCount: Int) async throws -> [UInt8] {
        let count = max(1, maxCount)
        return try await perform(.read) { fd in
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, count) }
            if n > 0 { return .done(Array(buffer[..<n])) }
            return n == 0 ? .failed(.disconnected(path: self.path)) : nil
        }
    }

    public func write(_ bytes: [UInt8]) async throws {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            offset += try await perform(.write) { fd in
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + start }, bytes.count - start) }
                return n >= 0 ? .done(n) : nil
            }
        }
    }

    public func close() async {
        closeNow()
    }

    private func closeNow() {
        let (fd, waits) = state.withLock { state in
            defer {
                state.fd = -1
                state.waits = [:]
            }
            return (state.fd, Array(state.waits.values))
        }
        for wait in waits {
            wait.finish(.failure(SerialPortError.closed))
        }
        if fd >= 0 {
            _ = Glibc.close(fd)
        }
    }

    /// Runs a non-blocking syscall under the lock (so `close` cannot free the descriptor under
    /// it) and, on `EAGAIN`, waits for readiness and tries again. `syscall` returns nil on
    /// failure, leaving `errno` set.
    private func perform<Value: Sendable>(
        _ direction: SerialReadinessWait.Direction, _ syscall: @escaping (Int32) -> Attempt<Value>?
    ) async throws -> Value {
        while true {
            try Task.checkCancellation()
            let attempt: Attempt<Value> = state.withLock { state in
                guard state.fd >= 0 else { return .failed(.closed) }
                state.syscalls += 1
                if let result = syscall(state.fd) { return result }
                return failure(errno: errno, direction: direction, state: &state)
            }
            switch attempt {
            case let .done(value):
                return value
            case .retry:
                continue
            case let .failed(error):
                throw error
            case let .wait(wait):
                defer { _ = state.withLock { $0.waits.removeValue(forKey: ObjectIdentifier(wait)) } }
                try await wait.wait()
            }
        }
    }

    private func failure<Value>(
        errno code: Int32, direction: SerialReadinessWait.Direction, state: inout State
    ) -> Attempt<Value> {
        switch code {
        case EAGAIN, EWOULDBLOCK:
            // The wait owns a duplicate descriptor, so closing ours never races the event loop.
            let duplicate = fcntl(state.fd, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else { return .failed(.io(path: path, reason: SerialOpenError.describe(errno: errno))) }
            let wait = SerialReadinessWait(fd: duplicate, direction: direction, queue: queue)
            state.waits[ObjectIdentifier(wait)] = wait
            return .wait(wait)
        case EINTR:
            return .retry
        case EIO, ENXIO, EPIPE, ENODEV:
            return .failed(.disconnected(path: path))
        default:
            return .failed(.io(path: path, reason: SerialOpenError.describe(errno: code)))
        }
    }
}
