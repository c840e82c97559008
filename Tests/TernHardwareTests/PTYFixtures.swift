import Foundation
import Glibc
import TernCore
import TernHardware

/// A stable device path (a symlink in a fresh temporary directory) to whichever PTY slave is
/// plugged in: `plug()` = a new PTY pair behind the link, `unplug()` = close the master and remove the link.
final class PluggablePTY {
    let path: String
    private let directory: String
    private(set) var pty: PTYPair?

    init() throws {
        directory = NSTemporaryDirectory() + "tern-pty-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/ttyGPS"
    }

    deinit {
        unplug()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The master of the plugged-in pair (-1 when unplugged), for writers running in tasks.
    var master: Int32 { pty?.master ?? -1 }

    func plug() throws {
        let pair = try PTYPair()
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: pair.slavePath)
        pty = pair
    }

    func unplug() {
        pty?.closeMaster()
        pty = nil
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Writes `bytes` to a (non-blocking) descriptor; returns false when it is full (the rest is
/// dropped, as a UART with nobody reading drops bytes) or closed.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset) }
        guard n > 0 else { return false }
        offset += n
    }
    return true
}

/// Writes `bytes` one at a time, each a 10-bit frame time after the previous at `baud`, like a UART.
func writePaced(_ fd: Int32, _ bytes: [UInt8], baud: Int) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    let frame = Duration.seconds(10) / baud
    for (index, byte) in bytes.enumerated() {
        try await clock.sleep(until: start + frame * index, tolerance: nil)
        writeAll(fd, [byte])
    }
}

/// The input baud rate the port configured on the PTY, as the simulated device sees it.
func configuredBaud(slave fd: Int32) -> Int? {
    var options = termios()
    guard tcgetattr(fd, &options) == 0 else { return nil }
    return TermiosSerialPort.supportedBaudRates.first { $0.value == cfgetispeed(&options) }?.key
}
