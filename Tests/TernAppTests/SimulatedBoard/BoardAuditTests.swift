import Foundation
import Testing
import TernApp
import TernCore
import TernSimulation
import TernTesting

/// The simulated board's check of stored positions: measured after their power-on, as reported.
@Suite(.timeLimit(.minutes(5))) struct BoardAuditTests {
    /// A board whose clock barely moves (speed 0.001), audited against a receiver that reported, at
    /// every time, the route's position 6 m east.
    private func rig() throws -> (board: SimulatedBoard, sut: BoardAudit) {
        let board = try SimulatedBoard(speed: 0.001, seed: 1, startTime: Date(timeIntervalSince1970: 1_795_219_200))
        let reported: @Sendable (Date) -> SimulatedFixes.Report? = { [route = board.route, start = board.gps.utc(at: 0)] time in
            let truth = route.state(at: time.timeIntervalSince(start)).coordinate
            return SimulatedFixes.Report(
                fix: Fix(time: time, coordinate: Geodesy.destination(from: truth, distance: 6, bearing: 90), quality: .gps, accuracy: 4))
        }
        return (board, BoardAudit(board: board, report: reported, jump: Self.jump, logger: .quiet()))
    }

    /// The shipped filter's jump rule: 70 m/s, 100 m.
    static let jump = JumpRule(maxSpeed: 70, tolerance: 100)

    /// A board audited against a receiver that reported only at `faulty` (board seconds), each time
    /// an outlier 500 m east of the route; `reported` makes each second's fix `metresOff` east of it.
    private func rig(faulty: Set<Double>) throws -> (board: SimulatedBoard, sut: BoardAudit, reported: @Sendable (Double, Double) -> Fix) {
        let board = try SimulatedBoard(speed: 0.001, seed: 1, startTime: Date(timeIntervalSince1970: 1_795_219_200))
        let start = board.gps.utc(at: 0)
        // Each second's report: `metresOff` east of the route.
        let report: @Sendable (Double, Double) -> Fix = { [route = board.route] second, metresOff in
            let truth = route.state(at: second).coordinate
            return Fix(
                time: start.addingTimeInterval(second), coordinate: Geodesy.destination(from: truth, distance: metresOff, bearing: 90),
                quality: .gps, accuracy: 4)
        }
        let sut = BoardAudit(
            board: board,
            report: { time in
                let second = time.timeIntervalSince(start)
                return faulty.contains(second) ? SimulatedFixes.Report(fix: report(second, 500), fault: .outlier(offsetM: 500)) : nil
            },
            jump: Self.jump, logger: .quiet())
        return (board, sut, report)
    }

    /// A position `metresOff` east of the route at `second` (by default what the rig's receiver reported).
    private func position(_ board: SimulatedBoard, second: Double, metresOff: Double = 6) -> Position {
        let truth = board.route.state(at: second).coordinate
        let fix = Fix(
            time: board.gps.utc(at: second), coordinate: Geodesy.destination(from: truth, distance: metresOff, bearing: 90),
            quality: .gps, accuracy: 4)
        return Position(fix: fix)
    }

    @Test func aPositionMeasuredAfterItsPowerOnOnTheRouteIsClean() async throws {
        let (board, sut) = try rig()
        try await board.power.setPower(on: true)
        sut.stored(position(board, second: 5, metresOff: 6))
        #expect(sut.summary.checked == 1 && sut.summary.isClean)
    }

    @Test func aFixAcceptedAfterAPowerOnButMeasuredBeforeItIsALeftover() async throws {
        let (board, sut) = try rig()
        try await board.power.setPower(on: true)
        // The board's clock is at ~0 s: a fix of second -60 was measured in an earlier power cycle.
        sut.accepted(position(board, second: -60).fix)
        #expect(sut.summary.stale == 1)
    }

    @Test func aFixAcceptedInItsOwnPowerCycleIsFreshWhenItIsWrittenLater() async throws {
        let (board, sut) = try rig()
        try await board.power.setPower(on: true)
        let fix = position(board, second: 0.5).fix
        sut.accepted(fix)
        // The group commit writes it after the next power-on: still fresh.
        try await board.power.setPower(on: false)
        try await board.power.setPower(on: true)
        sut.stored(Position(fix: fix))
        #expect(sut.summary.isClean)
    }

    @Test func aPositionOtherThanTheReportedOneIsUntrue() async throws {
        let (board, sut) = try rig()
        try await board.power.setPower(on: true)
        sut.stored(position(board, second: 1, metresOff: 9))
        #expect(sut.summary.untrue == 1)
        #expect(sut.summary.worstErrorM > 8.9)
    }

    @Test func aPositionWhenTheReceiverReportedNoneIsUntrue() async throws {
        let board = try SimulatedBoard(speed: 0.001, seed: 1, startTime: Date(timeIntervalSince1970: 1_795_219_200))
        let sut = BoardAudit(board: board, report: { _ in nil }, jump: Self.jump, logger: .quiet())
        sut.stored(position(board, second: 1))
        #expect(sut.summary.untrue == 1)
    }

    @Test func theSimulatedReceiverRemembersWhatItReported() async throws {
        let board = try SimulatedBoard(speed: 50, seed: 1)
        try await board.power.setPower(on: true)
        let gps = Task { try await board.gps.run(clock: board.clock) }
        defer { gps.cancel() }
        // The first fix comes after a cold start (~35 s simulated: under a second at 50x).
        let reported = await eventually(within: .seconds(20)) {
            board.gps.report(at: board.gps.utc(at: 40)) != nil
        }
        #expect(reported)
        #expect(board.gps.report(at: board.gps.utc(at: 40.5)) == nil)
    }

    @Test func aFaultyFixTheJumpRuleRejectsFailsTheAuditWhenStored() async throws {
        let (_, sut, report) = try rig(faulty: [11])
        sut.accepted(report(10, 0))
        // 500 m a second after the last accepted fix: beyond 70 m/s × 1 s + 100 m.
        let outlier = report(11, 500)
        sut.accepted(outlier)
        sut.stored(Position(fix: outlier))
        #expect(sut.summary.faultsPastTheFilter == 1)
        #expect(!sut.summary.isClean)
    }

    @Test func aFaultyFixNoRuleCanTellIsCountedWithItsError() async throws {
        let (_, sut, report) = try rig(faulty: [610])
        sut.accepted(report(10, 0))
        // 500 m ten minutes after the last accepted fix: within 70 m/s × 600 s + 100 m.
        let outlier = report(610, 500)
        sut.accepted(outlier)
        sut.stored(Position(fix: outlier))
        #expect(sut.summary.faultsPastTheFilter == 0)
        #expect(sut.summary.faultsStored == 1)
        #expect(abs(sut.summary.worstFaultErrorM - 500) < 1)
    }

    @Test func aFaultlessFixIsNeverCountedAsFaulty() async throws {
        let (_, sut, report) = try rig(faulty: [])
        sut.accepted(report(10, 0))
        let far = report(11, 500)
        sut.accepted(far)
        sut.stored(Position(fix: far))
        #expect(sut.summary.faultsPastTheFilter == 0 && sut.summary.faultsStored == 0)
    }
}
