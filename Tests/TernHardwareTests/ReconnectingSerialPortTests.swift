import Clocks
import Foundation
import Logging
import TernCore
import TernTesting
import Testing

@testable import TernHardware

private let quietLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

private func makeSUT(_ opener: ScriptedOpener, clock: TestClock<Duration>) -> ReconnectingSerialPort {
    ReconnectingSerialPort(
        path: "/dev/ttyGPS", baudRate: 9600, clock: clock, logger: quietLogger,
        opener: { try opener.open(path: $0, baudRate: $1) })
}

private let noDevice = SerialPortError.cannotOpen(path: "/dev/ttyGPS", reason: "no such device")
private let hangUp = SerialPortError.disconnected(path: "/dev/ttyGPS")

@Suite(.timeLimit(.minutes(1)))
struct ReconnectingSerialPortTests {
    @Test func isConnectingBeforeTheFirstRead() {
        let sut = makeSUT(ScriptedOpener([]), clock: TestClock())
        #expect(sut.linkState == .connecting)
    }

    @Test func theFirstReadOpensTheDeviceAndReturnsItsBytes() async throws {
        let opener = ScriptedOpener([.port(FakeSerialPort(chunks: [[0x24]]))])
        let sut = makeSUT(opener, clock: TestClock())
        #expect(try await sut.read(maxCount: 8) == [0x24])
        #expect(sut.linkState == .connected)
    }

    @Test func aDisconnectIsReportedAsGone() async throws {
        let opener = ScriptedOpener([.port(FakeSerialPort(chunks: [], then: .fail(hangUp))), .fail(noDevice)])
        let sut = makeSUT(opener, clock: TestClock())
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { sut.linkState == .gone(reason: "hang-up or I/O error") })
        read.cancel()
    }

    @Test func aReadSurvivesADisconnectAndReturnsBytesFromTheReopenedDevice() async throws {
        let clock = TestClock()
        let opener = ScriptedOpener([
            .port(FakeSerialPort(chunks: [], then: .fail(hangUp))), .port(FakeSerialPort(chunks: [[0x41]])),
        ])
        let sut = makeSUT(opener, clock: clock)
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { sut.linkState != .connected && opener.calls == 1 })
        try await clock.sleeperRegistered()  // the back-off
        await clock.advance(by: .milliseconds(101))
        #expect(try await value(of: read) == [0x41])
        #expect(sut.linkState == .connected)
    }

    @Test func doesNotReopenBeforeTheBackoffDelay() async throws {
        let clock = TestClock()
        let opener = ScriptedOpener([.port(FakeSerialPort(chunks: [], then: .fail(hangUp))), .fail(noDevice)])
        let sut = makeSUT(opener, clock: clock)
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { sut.linkState == .gone(reason: "hang-up or I/O error") })
        try await clock.sleeperRegistered()  // the back-off
        await clock.advance(by: .milliseconds(99))
        try await Task.sleep(for: .milliseconds(20))
        #expect(opener.calls == 1)
        read.cancel()
    }

    @Test func failedReopensBackOffDoubling() async throws {
        let clock = TestClock()
        let opener = ScriptedOpener([.fail(noDevice)])
        let sut = makeSUT(opener, clock: clock)
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { opener.calls == 1 })
        try await clock.sleeperRegistered()  // the back-off
        await clock.advance(by: .milliseconds(101))
        #expect(await eventually(nudging: clock) { opener.calls == 2 })
        // The second failure (at 101 ms) waits 200 ms: nothing at 299 ms, a reopen just after 301 ms.
        try await Task.sleep(for: .milliseconds(20))
        await clock.advance(by: .milliseconds(198))
        try await Task.sleep(for: .milliseconds(20))
        #expect(opener.calls == 2)
        await clock.advance(by: .milliseconds(3))
        #expect(await eventually(nudging: clock) { opener.calls == 3 })
        read.cancel()
    }

    @Test func aFailedOpenReportsGoneWithTheReason() async throws {
        let opener = ScriptedOpener([.fail(noDevice)])
        let sut = makeSUT(opener, clock: TestClock())
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { sut.linkState == .gone(reason: "no such device") })
        read.cancel()
    }

    @Test func closingDuringTheBackoffMakesThePendingReadThrowClosed() async throws {
        let opener = ScriptedOpener([.fail(noDevice)])
        let sut = makeSUT(opener, clock: TestClock())
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { opener.calls == 1 })
        await sut.close()
        await #expect(throws: SerialPortError.closed) { try await value(of: read) }
    }

    @Test func cancellingAReadDuringTheBackoffThrowsCancellationError() async throws {
        let opener = ScriptedOpener([.fail(noDevice)])
        let sut = makeSUT(opener, clock: TestClock())
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { opener.calls == 1 })
        read.cancel()
        await #expect(throws: CancellationError.self) { try await value(of: read) }
    }

    @Test func reopensAtTheBaudRateLastSet() async throws {
        let clock = TestClock()
        let opener = ScriptedOpener([.port(FakeSerialPort(chunks: [], then: .fail(hangUp))), .fail(noDevice)])
        let sut = makeSUT(opener, clock: clock)
        try await sut.setBaudRate(38400)
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { opener.calls == 1 && sut.linkState != .connected })
        try await clock.sleeperRegistered()  // the back-off
        await clock.advance(by: .milliseconds(101))
        #expect(await eventually(nudging: clock) { opener.calls == 2 })
        #expect(opener.bauds == [38400, 38400])
        read.cancel()
    }

    @Test func theLinkStateStreamShowsEveryChange() async throws {
        let clock = TestClock()
        let opener = ScriptedOpener([
            .port(FakeSerialPort(chunks: [], then: .fail(hangUp))), .port(FakeSerialPort(chunks: [[0x41]])),
        ])
        let sut = makeSUT(opener, clock: clock)
        var states = sut.linkStates().makeAsyncIterator()
        let read = Task { try await sut.read(maxCount: 8) }
        #expect(await eventually { opener.calls == 1 && sut.linkState != .connected })
        try await clock.sleeperRegistered()  // the back-off
        await clock.advance(by: .milliseconds(101))
        _ = try await value(of: read)
        var seen: [ReceiverLinkState] = []
        for _ in 0..<4 { if let state = await states.next() { seen.append(state) } }
        #expect(seen == [.connecting, .connected, .gone(reason: "hang-up or I/O error"), .connected])
    }

    @Test func unpluggingAndReplugARealPTYResumesDataWithinFiveSeconds() async throws {
        let device = try PluggablePTY()
        try device.plug()
        let sut = ReconnectingSerialPort(path: device.path, baudRate: 9600, logger: quietLogger)
        writeAll(device.master, Array("A".utf8))
        #expect(try await sut.read(maxCount: 8) == Array("A".utf8))
        let reader = Task { () throws -> (bytes: [UInt8], at: ContinuousClock.Instant) in
            let bytes = try await sut.read(maxCount: 8)
            return (bytes, ContinuousClock.now)
        }
        device.unplug()
        #expect(await eventually(within: .seconds(10)) { if case .gone = sut.linkState { true } else { false } })
        try await Task.sleep(for: .milliseconds(150))
        try device.plug()
        let replugged = ContinuousClock.now
        // The device talks every 20 ms, as a receiver would, until the port reads it.
        let master = device.master
        let talker = Task {
            while !Task.isCancelled {
                writeAll(master, Array("B".utf8))
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let (bytes, at) = try await value(of: reader)
        talker.cancel()
        _ = try? await value(of: talker)
        await sut.close()
        let resumedAfter = at - replugged
        #expect(bytes.first == UInt8(ascii: "B"))
        #expect(sut.linkState == .connected)
        #expect(resumedAfter <= .seconds(5), "resumed \(resumedAfter) after replug")
        print("ReconnectingSerialPort: data resumed \(resumedAfter) after replug")
    }
}

/// Waits for `condition`, nudging the test clock: a back-off sleep registered just after an advance
/// (its deadline is absolute, so already due) fires only on the clock's next advance.
private func eventually(nudging clock: TestClock<Duration>, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    await eventually {
        await clock.advance(by: .zero)
        return condition()
    }
}
