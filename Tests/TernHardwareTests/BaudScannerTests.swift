import Foundation
import Glibc
import TernCore
import TernTesting
import TernNMEA
import Testing

@testable import TernHardware

/// Valid NMEA (GGA + RMC) for the fix `second` seconds after 2025-11-21T02:30:00Z.
func validNMEA(second: Int) -> [UInt8] {
    Array(NMEAWriter().sentences(for: Fix(
        time: Date(timeIntervalSince1970: 1_763_692_200 + Double(second)),
        coordinate: Coordinate(latitude: 45.8, longitude: 15.9),
        altitude: 120, speed: 1, course: 90, quality: .gps, satellites: 8, hdop: 1.0)).joined().utf8)
}

/// What a receiver at another baud rate looks like: bytes with framing noise, no `$`.
let lineNoise: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0x80) }

/// A simulated receiver on a PTY that talks valid NMEA only while the port is set to `baud`,
/// and noise otherwise, every 10 ms (one fix a tick, its clock running 100× fast) until cancelled.
func receiverTalking(at baud: Int, on pty: PTYPair) -> Task<Void, any Error> {
    let (master, slave) = (pty.master, pty.slave)
    return Task {
        var second = 0
        while !Task.isCancelled {
            writeAll(master, configuredBaud(slave: slave) == baud ? validNMEA(second: second) : lineNoise)
            second += 1
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

private let fastScan = BaudScanner.Options(dwell: .milliseconds(300))

@Suite(.timeLimit(.minutes(1)))
struct BaudScannerTests {
    @Test func setBaudRateReconfiguresTheOpenLine() throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        try sut.setBaudRate(57600)
        #expect(configuredBaud(slave: pty.slave) == 57600)
        #expect(sut.baudRate == 57600)
    }

    @Test func setBaudRateRejectsAnUnsupportedRate() throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        #expect(throws: SerialPortError.unsupportedBaudRate(300)) { try sut.setBaudRate(300) }
    }

    @Test func setBaudRateAfterCloseThrowsClosed() async throws {
        let pty = try PTYPair()
        let sut = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        await sut.close()
        #expect(throws: SerialPortError.closed) { try sut.setBaudRate(4800) }
    }

    @Test func findsTheRateThatYieldsValidSentences() async throws {
        let pty = try PTYPair()
        let port = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let receiver = receiverTalking(at: 38400, on: pty)
        let sut = BaudScanner(options: fastScan)
        let rate = try await sut.scan(port)
        receiver.cancel()
        _ = try? await value(of: receiver)
        #expect(rate == 38400)
        #expect(port.baudRate == 38400)
    }

    @Test func keepsTheFirstCandidateWhenItAlreadyWorks() async throws {
        let pty = try PTYPair()
        let port = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let receiver = receiverTalking(at: 9600, on: pty)
        let sut = BaudScanner(options: fastScan)
        let rate = try await sut.scan(port)
        receiver.cancel()
        _ = try? await value(of: receiver)
        #expect(rate == 9600)
    }

    @Test func returnsNilAndRestoresTheRateWhenNothingIsValid() async throws {
        let pty = try PTYPair()
        let port = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 19200)
        let receiver = receiverTalking(at: 1200, on: pty)
        let sut = BaudScanner(options: .init(dwell: .milliseconds(60)))
        let rate = try await sut.scan(port)
        receiver.cancel()
        _ = try? await value(of: receiver)
        #expect(rate == nil)
        #expect(port.baudRate == 19200)
    }
}
