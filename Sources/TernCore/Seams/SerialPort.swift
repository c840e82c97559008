import Foundation

// The seams: each responsibility is one small protocol, injected through initializers; each
// with the results it returns, in Seams/ or beside its owner (the filter, the scheduler, the forwarder).

/// A byte stream from a UART (or anything that behaves like one).
public protocol SerialPort: Sendable {
    /// Waits until bytes are available and returns them (at most `maxCount`, never empty).
    /// Throws `SerialPortError.disconnected` when the device went away (hang-up, EIO, end of file).
    func read(maxCount: Int) async throws -> [UInt8]
    /// Writes all bytes, waiting while the device's buffer is full.
    func write(_ bytes: [UInt8]) async throws
    /// Closes the device; reads and writes after this throw `SerialPortError.closed`.
    func close() async
}

public enum SerialPortError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case unsupportedBaudRate(Int)
    case notATerminal(path: String)
    case disconnected(path: String)
    case closed
    case io(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason):
            "cannot open serial device \(path): \(reason)"
        case let .unsupportedBaudRate(baud):
            "unsupported baud rate \(baud): use one of 4800, 9600, 19200, 38400, 57600, 115200"
        case let .notATerminal(path):
            "\(path) is not a serial device (tcgetattr failed): check the path, e.g. /dev/serial0"
        case let .disconnected(path):
            "serial device \(path) disconnected (hang-up or I/O error): check the cable or HAT"
        case .closed:
            "serial port is closed"
        case let .io(path, reason):
            "I/O error on \(path): \(reason)"
        }
    }
}
