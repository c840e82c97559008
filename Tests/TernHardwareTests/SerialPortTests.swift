import Foundation
import Glibc
import Synchronization
import TernCore
import TernTesting
import Testing

@testable import TernHardware

/// A pseudo-terminal pair: the test plays the device on `master`, the port opens `slavePath`.
/// Note: a PTY ignores the baud rate, so nothing here is paced like a real UART.
final class PTYPair: Sendable {
    private let masterFD: Mutex<Int32>
    /// Kept open so the slave's settings can be read back with tcgetattr.
    let slave: Int32
    let slavePath: String

    /// -1 once closed.
    var master: Int32 { masterFD.withLock { $0 } }

    init() throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        var name = [CChar](repeating: 0, count: 256)
        guard openpty(&master, &slave, &name, nil, nil) == 0 else { throw POSIXError(.EIO) }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        self.masterFD = Mutex(master)
        self.slave = slave
        self.slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        closeMaster()
        _ = Glibc.close(slave)
    }

    func writeToMaster(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress, bytes.count) }
    }

    /// Reads what the port wrote, polling the non-blocking master until `count` bytes or the timeout.
    func readFromMaster(count: Int, timeout: Duration = .seconds(1)) async -> [UInt8] {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while received.count < count, ContinuousClock.now < deadline {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if n > 0 {
                received += buffer[..<n]
            } else {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        return received
    }

    func closeMaster() {
        masterFD.withLock { fd in
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(1)))
struct SerialPortTests {
    @Test func bytesWrittenOnTheMasterArriveThroughThePort() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        pty.writeToMaster("$GPGGA\r\n")
        #expect(try await sut.read(maxCount: 64) == Array("$GPGGA\r\n".utf8))
    }

    @Test func aReadReturnsAtMostMaxCountBytes() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        pty.writeToMaster("abcdef")
        #expect(try await sut.read(maxCount: 4) == Array("abcd".utf8))
    }

    @Test func aReadWaitsWithoutSpinningUntilDataArrives() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let read = Task { try await sut.read(maxCount: 64) }
        try await Task.sleep(for: .milliseconds(300))
        let callsWhileWaiting = sut.syscallCount
        pty.writeToMaster("later")
        #expect(try await value(of: read) == Array("later".utf8))
        #expect(callsWhileWaiting <= 1, "a polling read would call read() again and again while waiting")
    }

    @Test func bytesWrittenThroughThePortArriveAtTheMaster() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        try await sut.write(Array("$PMTK220,1000*1F\r\n".utf8))
        #expect(await pty.readFromMaster(count: 18) == Array("$PMTK220,1000*1F\r\n".utf8))
    }

    @Test func aWriteLargerThanTheDeviceBufferWaitsForItToDrain() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 115_200)
        let payload = [UInt8](repeating: UInt8(ascii: "x"), count: 256 * 1024)
        async let received = pty.readFromMaster(count: payload.count, timeout: .seconds(5))
        try await sut.write(payload)
        #expect(await received.count == payload.count)
    }

    @Test func theConfiguredBaudRateReadsBackOnTheDevice() throws {
        let pty = try PTYPair()
        _ = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 115_200)
        var options = termios()
        #expect(tcgetattr(pty.slave, &options) == 0)
        #expect(cfgetospeed(&options) == speed_t(B115200))
        #expect(cfgetispeed(&options) == speed_t(B115200))
    }

    @Test func theLineIsRaw8N1WithoutFlowControl() throws {
        let pty = try PTYPair()
        _ = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        var options = termios()
        #expect(tcgetattr(pty.slave, &options) == 0)
        #expect(options.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(options.c_cflag & (tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS)) == 0)
        #expect(options.c_cflag & (tcflag_t(CLOCAL) | tcflag_t(CREAD)) == tcflag_t(CLOCAL) | tcflag_t(CREAD))
        #expect(options.c_lflag & (tcflag_t(ICANON) | tcflag_t(ECHO)) == 0)
        #expect(options.c_iflag & (tcflag_t(IXON) | tcflag_t(IXOFF)) == 0)
    }

    @Test func anUnsupportedBaudRateIsRejected() throws {
        let pty = try PTYPair()
        #expect(throws: SerialPortError.unsupportedBaudRate(12_345)) {
            try TermiosSerialPort.open(path: pty.slavePath, baudRate: 12_345)
        }
    }

    @Test func closingTheMasterMakesAPendingReadThrowDisconnected() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let read = Task { try await sut.read(maxCount: 64) }
        try await Task.sleep(for: .milliseconds(50))
        pty.closeMaster()
        await #expect(throws: SerialPortError.disconnected(path: pty.slavePath)) { try await value(of: read) }
    }

    @Test func cancellingAPendingReadReturnsPromptly() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let read = Task { try await sut.read(maxCount: 64) }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        read.cancel()
        await #expect(throws: CancellationError.self) { try await value(of: read) }
        #expect(ContinuousClock.now - start < .milliseconds(200))
    }

    @Test func closingThePortMakesAPendingReadThrowClosed() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let read = Task { try await sut.read(maxCount: 64) }
        try await Task.sleep(for: .milliseconds(50))
        await sut.close()
        await #expect(throws: SerialPortError.closed) { try await value(of: read) }
    }

    @Test func writingAfterCloseThrowsClosed() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        await sut.close()
        await #expect(throws: SerialPortError.closed) { try await sut.write([0x24]) }
    }

    @Test func openingAMissingPathNamesThePathAndTheFix() throws {
        let error = #expect(throws: SerialPortError.self) {
            try TermiosSerialPort.open(path: "/dev/tern-missing-uart", baudRate: 9600)
        }
        guard case let .cannotOpen(path, reason) = error else {
            Issue.record("expected cannotOpen, got \(String(describing: error))")
            return
        }
        #expect(path == "/dev/tern-missing-uart")
        #expect(reason.contains("enable_uart=1"))
    }

    @Test func openingANonTerminalIsRejected() throws {
        #expect(throws: SerialPortError.notATerminal(path: "/dev/null")) {
            try TermiosSerialPort.open(path: "/dev/null", baudRate: 9600)
        }
    }

    @Test func permissionDeniedNamesTheDialoutGroup() {
        #expect(SerialOpenError.reason(errno: EACCES).contains("dialout"))
    }
}
