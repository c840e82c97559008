import Foundation
import Synchronization
import Logging
import TernCore
import TernNMEA
import TernTesting
import Testing

@testable import TernHardware

private let quietLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
private let start = Date(timeIntervalSince1970: 1_763_692_200)

/// Short thresholds so link problems show within a test's time.
private let fastHealth = LinkHealthMonitor.Options(silenceTimeout: .milliseconds(150), window: .seconds(1))

private func makeReceiver(_ port: any SerialPort, autobaud: Bool = false) -> NMEAReceiver {
    NMEAReceiver(
        serialPort: port, powerSwitch: SpyPowerSwitch(),
        options: .init(
            dateReference: { .notBefore(start) }, health: fastHealth, autobaud: autobaud,
            baudScan: .init(dwell: .milliseconds(400))),
        logger: quietLogger)
}

/// `count` one-second fixes as NMEA, the first `from` seconds after `start`.
private func nmea(fixes count: Int, from first: Int = 0) -> [UInt8] {
    (first..<(first + count)).flatMap { validNMEA(second: $0) }
}

/// Reads fixes in the background until stopped, collecting them.
private final class FixCollector: Sendable {
    private final class Fixes: Sendable {
        let list = Mutex<[Fix]>([])
    }

    private let fixes = Fixes()
    private let task: Task<Void, any Error>

    init(_ receiver: NMEAReceiver) {
        let fixes = self.fixes
        task = Task {
            for try await fix in receiver.fixes() { fixes.list.withLock { $0.append(fix) } }
        }
    }

    var count: Int { fixes.list.withLock { $0.count } }
    var all: [Fix] { fixes.list.withLock { $0 } }

    func stop() async {
        task.cancel()
        _ = try? await value(of: task)
    }
}

@Suite(.timeLimit(.minutes(1)))
struct NMEAReceiverLinkTests {
    @Test func aPlainOpenPortStartsConnected() {
        let sut = makeReceiver(FakeSerialPort(chunks: []))
        #expect(sut.linkState == .connected)
    }

    @Test func aPoweredReceiverSendingNothingIsReportedSilent() async throws {
        let sut = makeReceiver(FakeSerialPort(chunks: []))
        try await sut.powerOn()
        let reader = FixCollector(sut)
        #expect(await eventually(within: .seconds(10)) { if case .silent = sut.linkState { true } else { false } })
        await reader.stop()
    }

    @Test func anUnpoweredReceiverIsNeverSilent() async throws {
        let sut = makeReceiver(FakeSerialPort(chunks: []))
        let reader = FixCollector(sut)
        try await Task.sleep(for: .milliseconds(300))
        #expect(sut.linkState == .connected)
        await reader.stop()
    }

    @Test func bytesAfterAStallEndTheSilence() async throws {
        let pty = try PTYPair()
        let sut = makeReceiver(try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600))
        try await sut.powerOn()
        let reader = FixCollector(sut)
        #expect(await eventually(within: .seconds(10)) { if case .silent = sut.linkState { true } else { false } })
        writeAll(pty.master, nmea(fixes: 2))
        #expect(await eventually(within: .seconds(10)) { sut.linkState == .connected })
        await reader.stop()
    }

    @Test func garbageWithoutValidSentencesIsReportedAsWrongBaud() async throws {
        // A receiver at another baud rate keeps sending: noise every 20 ms, so the state holds
        // (5 chunks and then nothing read as wrong baud for only 150 ms, then silent: a loaded
        // machine's poll could miss it).
        let sut = makeReceiver(FakeSerialPort(chunks: [], then: .repeating(lineNoise, every: .milliseconds(20))))
        try await sut.powerOn()
        let reader = FixCollector(sut)
        #expect(await eventually(within: .seconds(10)) { sut.linkState == .wrongBaud })
        await reader.stop()
    }

    @Test func aGarbageBurstBetweenSentencesLosesNoLaterFix() async throws {
        let pty = try PTYPair()
        let sut = makeReceiver(try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600))
        let reader = FixCollector(sut)
        writeAll(pty.master, nmea(fixes: 2) + lineNoise + lineNoise + nmea(fixes: 2, from: 2))
        #expect(await eventually(within: .seconds(10)) { reader.count == 4 })
        await reader.stop()
        #expect(reader.all.map(\.time) == [start, start + 1, start + 2, start + 3])
        #expect(sut.linkState == .connected)
    }

    @Test func aWriterPacedAt9600BaudYieldsEveryFixIncludingTheLast() async throws {
        let pty = try PTYPair()
        let sut = makeReceiver(try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600))
        let reader = FixCollector(sut)
        let stream = nmea(fixes: 7)  // about 1 KB: ~1.1 s at 9600 baud
        try await writePaced(pty.master, stream, baud: 9600)
        #expect(await eventually(within: .seconds(10)) { sut.stats.bytes == stream.count })
        #expect(await eventually(within: .seconds(10)) { reader.count == 7 })
        await reader.stop()
        #expect(sut.stats.framer.garbageBytes == 0)
    }

    @Test func autobaudFindsTheReceiversRateAndFixesFlow() async throws {
        let pty = try PTYPair()
        let sut = makeReceiver(try TermiosSerialPort.open(path: pty.slavePath, baudRate: 9600), autobaud: true)
        var states = sut.linkStates().makeAsyncIterator()
        try await sut.powerOn()
        let device = receiverTalking(at: 19200, on: pty)
        let reader = FixCollector(sut)
        #expect(await eventually(within: .seconds(10)) { reader.count > 0 })
        await reader.stop()
        device.cancel()
        _ = try? await value(of: device)
        var seen: [ReceiverLinkState] = []
        for _ in 0..<4 { if let state = await states.next() { seen.append(state) } }
        #expect(seen == [.connected, .wrongBaud, .autobauding, .connected])
        #expect(configuredBaud(slave: pty.slave) == 19200)
    }

    @Test func unplugAndReplugShowGoneThenConnectedAndFixesResume() async throws {
        let device = try PluggablePTY()
        try device.plug()
        let port = ReconnectingSerialPort(path: device.path, baudRate: 9600, logger: quietLogger)
        let sut = makeReceiver(port)
        let reader = FixCollector(sut)
        #expect(await eventually { sut.linkState == .connected })
        writeAll(device.master, nmea(fixes: 2))
        #expect(await eventually(within: .seconds(10)) { reader.count == 1 })
        device.unplug()
        #expect(await eventually(within: .seconds(10)) { if case .gone = sut.linkState { true } else { false } })
        try device.plug()
        let replugged = ContinuousClock.now
        #expect(await eventually(within: .seconds(5)) { sut.linkState == .connected })
        writeAll(device.master, nmea(fixes: 2, from: 2))
        #expect(await eventually(within: .seconds(10)) { reader.count >= 2 })
        #expect(ContinuousClock.now - replugged <= .seconds(5))
        await reader.stop()
        await port.close()
    }
}
