import Foundation
import Testing
import TernApp
import TernCore
import TernSimulation
import TernTesting

/// The simulated board's check of stored positions: measured after their power-on, near the route.
@Suite(.timeLimit(.minutes(5))) struct BoardAuditTests {
    /// A board whose clock barely moves (speed 0.001), a position on its route at `second`.
    private func rig() throws -> (board: SimulatedBoard, sut: BoardAudit) {
        let board = try SimulatedBoard(speed: 0.001, seed: 1, startTime: Date(timeIntervalSince1970: 1_795_219_200))
        return (board, BoardAudit(board: board, logger: .quiet()))
    }

    private func position(_ board: SimulatedBoard, second: Double, metresOff: Double = 0) -> Position {
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

    @Test func aPositionFartherFromTheRouteThanTheNoiseIsUntrue() async throws {
        let (board, sut) = try rig()
        try await board.power.setPower(on: true)
        sut.stored(position(board, second: 1, metresOff: BoardAudit.noiseBound(.mt3339) + 10))
        #expect(sut.summary.untrue == 1)
        #expect(sut.summary.worstErrorM > BoardAudit.noiseBound(.mt3339))
    }
}
