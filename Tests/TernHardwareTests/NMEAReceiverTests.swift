import Foundation
import Logging
import TernCore
import TernNMEA
import TernTesting
import Testing

@testable import TernHardware

private let quietLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
private let start = Date(timeIntervalSince1970: 1_763_692_200)  // 2025-11-21T02:30:00Z

/// Writer output for `count` consecutive one-second fixes, cut into `chunkSize`-byte reads.
private func stream(fixes count: Int, chunkSize: Int = 17) -> [[UInt8]] {
    let writer = NMEAWriter()
    let bytes = (0..<count).flatMap { second in
        writer.sentences(for: Fix(
            time: start + Double(second), coordinate: Coordinate(latitude: 45.8, longitude: 15.9),
            altitude: 120, speed: 1, course: 90, quality: .gps, satellites: 8, hdop: 1.0)).joined().utf8
    }
    return stride(from: 0, to: bytes.count, by: chunkSize).map { Array(bytes[$0..<min($0 + chunkSize, bytes.count)]) }
}

private func makeReceiver(_ port: any SerialPort, power: SpyPowerSwitch = SpyPowerSwitch()) -> NMEAReceiver {
    NMEAReceiver(
        serialPort: port, powerSwitch: power, options: .init(dateReference: { .notBefore(start) }), logger: quietLogger)
}

@Suite(.timeLimit(.minutes(1)))
struct NMEAReceiverTests {
    @Test func powerOnSwitchesThePowerOn() async throws {
        let power = SpyPowerSwitch()
        let sut = makeReceiver(FakeSerialPort(chunks: []), power: power)
        try await sut.powerOn()
        #expect(power.calls == [true])
    }

    @Test func powerOffSwitchesThePowerOff() async throws {
        let power = SpyPowerSwitch()
        let sut = makeReceiver(FakeSerialPort(chunks: []), power: power)
        try await sut.powerOff()
        #expect(power.calls == [false])
    }

    @Test func yieldsFixesAssembledFromPartialReads() async throws {
        let sut = makeReceiver(FakeSerialPort(chunks: stream(fixes: 3)))
        var fixes: [Fix] = []
        for try await fix in sut.fixes() {
            fixes.append(fix)
            if fixes.count == 2 { break }
        }
        #expect(fixes.map(\.time) == [start, start + 1])
        #expect(fixes.first?.accuracy == NMEAFixAssembler.defaultUERE)
    }

    @Test func eachFixCarriesTheRealtimeWhenItsCyclesFirstSentenceWasRead() async throws {
        let chunks = stream(fixes: 3)
        let port = FakeSerialPort(chunks: chunks)
        // The realtime clock reads the number of reads so far: a fix's receivedAt names its chunk.
        var options = NMEAReceiver.Options(dateReference: { .notBefore(start) })
        options.realtime = { Date(timeIntervalSince1970: Double(port.reads)) }
        let sut = NMEAReceiver(serialPort: port, powerSwitch: SpyPowerSwitch(), options: options, logger: quietLogger)
        var fixes: [Fix] = []
        for try await fix in sut.fixes() {
            fixes.append(fix)
            if fixes.count == 2 { break }
        }
        let writer = NMEAWriter()
        let cycle = writer.sentences(for: Fix(
            time: start, coordinate: Coordinate(latitude: 45.8, longitude: 15.9), altitude: 120, speed: 1, course: 90,
            quality: .gps, satellites: 8, hdop: 1.0))
        let cycleBytes = cycle.joined().utf8.count
        // The read that completed the cycle's first sentence (17-byte chunks), counted from 1.
        let firstSentenceRead = { (k: Int) in Double((k * cycleBytes + cycle[0].utf8.count - 1) / 17 + 1) }
        #expect(fixes.map(\.receivedAt) == [0, 1].map { Date(timeIntervalSince1970: firstSentenceRead($0)) })
    }

    @Test func doesNotReadBeforeTheStreamIsIterated() {
        let port = FakeSerialPort(chunks: stream(fixes: 2))
        let sut = makeReceiver(port)
        _ = sut.fixes()
        #expect(port.reads == 0)
    }

    @Test func throwsDisconnectedWhenThePortGoesAway() async {
        let port = FakeSerialPort(chunks: stream(fixes: 1), then: .fail(.disconnected(path: "/dev/ttyGPS")))
        let sut = makeReceiver(port)
        await #expect(throws: SerialPortError.disconnected(path: "/dev/ttyGPS")) {
            for try await _ in sut.fixes() {}
        }
    }

    @Test func finishesWithTheLastEpochWhenThePortIsClosed() async throws {
        let sut = makeReceiver(FakeSerialPort(chunks: stream(fixes: 3), then: .fail(.closed)))
        var count = 0
        for try await _ in sut.fixes() { count += 1 }
        #expect(count == 3)
    }

    @Test func cancellingTheConsumerStopsReading() async throws {
        let port = FakeSerialPort(chunks: [])
        let sut = makeReceiver(port)
        let consumer = Task {
            for try await _ in sut.fixes() {}
        }
        #expect(await eventually { port.reads == 1 })
        consumer.cancel()
        try await value(of: consumer)
        try await Task.sleep(for: .milliseconds(20))
        #expect(port.reads == 1)
    }

    @Test func countsSentencesChecksumErrorsAndFixes() async throws {
        let corrupt = Array("$GPGGA,023000.00,4548.00000,N,01554.00000,E,1,08,1.00,120.0,M,,M,,*00\r\n".utf8)
        let sut = makeReceiver(FakeSerialPort(chunks: [corrupt] + stream(fixes: 2), then: .fail(.closed)))
        for try await _ in sut.fixes() {}
        #expect(sut.stats.sentences == 4)
        #expect(sut.stats.checksumErrors == 1)
        #expect(sut.stats.fixes == 2)  // the last one completed when the port closed
    }

    @Test func readsFixesFromARealPseudoTerminal() async throws {
        let pty = try PTYPair()
        let port = try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600)
        let sut = makeReceiver(port)
        for chunk in stream(fixes: 2, chunkSize: 1000) {
            pty.writeToMaster(String(decoding: chunk, as: UTF8.self))
        }
        var iterator = sut.fixes().makeAsyncIterator()
        let fix = try await iterator.next()
        #expect(fix?.time == start)
        await port.close()
    }
}
