import Clocks
import TernTesting
import Testing

@testable import TernHardware

@Suite(.timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    @Test func dueReturnsOnceTheDeadlinePasses() async throws {
        let clock = TestClock()
        let sut = DeadlineTimer(clock: clock)
        sut.schedule(at: .seconds(5))
        let due = Task { try await sut.due() }
        try await clock.sleeperRegistered()
        await clock.advance(by: .milliseconds(5001))
        #expect(try await value(of: due) == .seconds(5))
        #expect(sut.deadline == nil)
    }

    @Test func reschedulingLaterPostponesDue() async throws {
        let clock = TestClock()
        let sut = DeadlineTimer(clock: clock)
        sut.schedule(at: .seconds(5))
        let due = Task { try await sut.due() }
        try await clock.sleeperRegistered()  // waiting for 5 s
        sut.schedule(at: .seconds(8))
        await clock.advance(by: .seconds(6))
        try await clock.sleeperRegistered()  // waiting for 8 s
        #expect(sut.deadline == .seconds(8))
        await clock.advance(by: .milliseconds(2001))
        #expect(try await value(of: due) == .seconds(8))
    }

    @Test func schedulingWakesAWaiterThatHadNoDeadline() async throws {
        let clock = TestClock()
        let sut = DeadlineTimer(clock: clock)
        let due = Task { try await sut.due() }
        try await Task.sleep(for: .milliseconds(20))
        sut.schedule(at: .seconds(1))
        #expect(await eventually {
            await clock.advance(by: .seconds(1))
            return sut.deadline == nil
        })
        #expect(try await value(of: due) == .seconds(1))
    }

    @Test func cancellingAWaiterThrowsCancellationError() async throws {
        let sut = DeadlineTimer(clock: TestClock())
        let due = Task { try await sut.due() }
        due.cancel()
        await #expect(throws: CancellationError.self) { try await value(of: due) }
    }
}
