import Testing
import TernCore
import TernTesting

@Suite struct StandardLocationFilterTests {
    private func makeSUT() -> StandardLocationFilter {
        StandardLocationFilter(options: .init(maxAccuracy: 25, maxSpeed: 50, jumpTolerance: 100))
    }

    @Test func acceptsAGoodFirstFix() {
        var sut = makeSUT()
        let fix = Fix.fixture()
        #expect(sut.evaluate(fix) == .accept(fix))
    }

    @Test func rejectsAFixWithoutAValidQuality() {
        var sut = makeSUT()
        #expect(sut.evaluate(.fixture(quality: .invalid)) == .reject(.noFix))
        #expect(sut.evaluate(.fixture(quality: .estimated)) == .reject(.noFix))
    }

    @Test func rejectsCoordinatesOutOfRange() {
        var sut = makeSUT()
        var fix = Fix.fixture()
        fix.coordinate.latitude = 91
        #expect(sut.evaluate(fix) == .reject(.invalidCoordinate))
    }

    @Test func rejectsPoorAccuracy() {
        var sut = makeSUT()
        #expect(sut.evaluate(.fixture(accuracy: 40)) == .reject(.poorAccuracy(metres: 40, limit: 25)))
    }

    @Test func rejectsTheSameTimeTwice() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 10))
        #expect(sut.evaluate(.fixture(seconds: 10, metresNorth: 3)) == .reject(.duplicate))
    }

    @Test func rejectsAnOlderFix() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 10))
        #expect(sut.evaluate(.fixture(seconds: 5)) == .reject(.outOfSequence))
    }

    @Test func rejectsAFixWhoseTimeIsUntrusted() {
        var sut = makeSUT()
        var fix = Fix.fixture(seconds: 10)
        fix.timeUntrusted = true
        #expect(sut.evaluate(fix) == .reject(.untrustedTime))
    }

    @Test func anUntrustedFixNeverBecomesTheReference() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 10))
        var future = Fix.fixture(seconds: 10 * 365 * 86_400)
        future.timeUntrusted = true
        _ = sut.evaluate(future)
        #expect(sut.evaluate(.fixture(seconds: 20)) == .accept(.fixture(seconds: 20)))
    }

    @Test func rejectsAnImpossibleJump() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        let decision = sut.evaluate(.fixture(seconds: 10, metresNorth: 5_000))
        guard case let .reject(.implausibleJump(speed, limit)) = decision else {
            Issue.record("expected an implausible jump, got \(decision)")
            return
        }
        #expect(abs(speed - 500) < 5)
        #expect(limit == 50)
    }

    @Test func acceptsFastButPossibleMovement() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        let fix = Fix.fixture(seconds: 60, metresNorth: 2_000)
        #expect(sut.evaluate(fix) == .accept(fix))
    }

    @Test func aRejectedFixDoesNotBecomeTheReference() {
        var sut = makeSUT()
        _ = sut.evaluate(.fixture(seconds: 0))
        _ = sut.evaluate(.fixture(seconds: 10, metresNorth: 5_000))
        let fix = Fix.fixture(seconds: 20, metresNorth: 10)
        #expect(sut.evaluate(fix) == .accept(fix))
    }
}
