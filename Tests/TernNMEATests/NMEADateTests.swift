import Foundation
import Testing

@testable import TernNMEA

struct NMEADateTests {
    static let reference2026 = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    @Test func resolvesATwoDigitYearToTheReferenceCentury() {
        #expect(NMEADate.resolve(twoDigitYear: 25, reference: Self.reference2026) == 2025)
    }

    @Test func resolvesATwoDigitYearFarAheadToThePreviousCentury() {
        #expect(NMEADate.resolve(twoDigitYear: 99, reference: Self.reference2026) == 1999)
    }

    @Test func correctsA2006DateFromARolloverVictimTo2026() throws {
        let reported = try #require(NMEADate(year: 2006, month: 5, day: 20))
        #expect(reported.correctingWeekRollover(reference: Self.reference2026) == NMEADate(year: 2026, month: 1, day: 3))
    }

    @Test func correctsA1999DateWithTwoEras() throws {
        let reported = try #require(NMEADate(year: 1999, month: 8, day: 22))
        let reference2019 = Date(timeIntervalSince1970: 1_552_521_600)  // 2019-03-14
        #expect(reported.correctingWeekRollover(reference: reference2019) == NMEADate(year: 2019, month: 4, day: 7))
    }

    @Test func leavesADateNearTheReferenceAlone() throws {
        let reported = try #require(NMEADate(year: 2024, month: 2, day: 29))
        #expect(reported.correctingWeekRollover(reference: Self.reference2026) == reported)
    }

    @Test func decodingContextDefaultsToTheBuildReferenceDateAsALowerBound() {
        #expect(NMEADecodingContext().reference() == .notBefore(NMEADecodingContext.buildReferenceDate))
    }

    // Against a clock (the system clock, 2026-11-25 here): a correction never dates a fix after it.

    static let now = Date(timeIntervalSince1970: 1_795_564_800 + 13 * 3600)  // 2026-11-25T13:00Z

    private func resolved(_ year: Int, _ month: Int, _ day: Int, synchronised: Bool = true) throws -> NMEADateResolution {
        try #require(NMEADate(year: year, month: month, day: day)).resolvingWeekRollover(.clock(Self.now, synchronised: synchronised))
    }

    @Test func aReceiverStuckBefore1999IsMovedForwardTwoEras() throws {
        let sut = try resolved(1987, 8, 26)
        #expect(sut == NMEADateResolution(date: try #require(NMEADate(year: 2026, month: 11, day: 25)), trusted: true))
    }

    @Test func aReceiverStuckInTheSecondEraIsMovedForwardOneEra() throws {
        let sut = try resolved(2007, 4, 11)
        #expect(sut == NMEADateResolution(date: try #require(NMEADate(year: 2026, month: 11, day: 25)), trusted: true))
    }

    @Test func aReceiverADayAheadOfTheClockAgreesWithIt() throws {
        let sut = try resolved(2026, 11, 26)
        #expect(sut.trusted)
        #expect(sut.date == NMEADate(year: 2026, month: 11, day: 26))
    }

    @Test func aLogReplayedYearsLaterKeepsItsDateButIsUntrustedAgainstASynchronisedClock() throws {
        // One era later would be 2027-08-08: after the clock, so never chosen.
        let sut = try resolved(2007, 12, 23)
        #expect(sut == NMEADateResolution(date: try #require(NMEADate(year: 2007, month: 12, day: 23)), trusted: false))
    }

    @Test func aLogReplayedYearsLaterIsNotMovedPastAnUnsynchronisedClockEither() throws {
        let sut = try resolved(2007, 12, 23, synchronised: false)
        #expect(sut == NMEADateResolution(date: try #require(NMEADate(year: 2007, month: 12, day: 23)), trusted: true))
    }

    @Test func aDateAheadOfASynchronisedClockIsKeptButUntrusted() throws {
        let sut = try resolved(2027, 3, 1)
        #expect(sut == NMEADateResolution(date: try #require(NMEADate(year: 2027, month: 3, day: 1)), trusted: false))
    }

    @Test func aDateAheadOfAnUnsynchronisedClockIsTrusted() throws {
        // A Pi without RTC that was off for months boots with its last saved time: the receiver is right.
        let sut = try resolved(2027, 3, 1, synchronised: false)
        #expect(sut == NMEADateResolution(date: try #require(NMEADate(year: 2027, month: 3, day: 1)), trusted: true))
    }

    @Test func noCorrectionEverDatesAFixAfterTheClockPlusADay() {
        let today = NMEADate.day(of: Self.now)
        for days in stride(from: NMEADate.day(of: Date(timeIntervalSince1970: 315_964_800)), through: today + 1, by: 37) {
            let reported = NMEADate(daysSinceEpoch: days)
            let sut = reported.resolvingWeekRollover(.clock(Self.now, synchronised: true))
            #expect(sut.date.daysSinceEpoch <= today + 1, "\(reported) became \(sut.date)")
            #expect((sut.date.daysSinceEpoch - days) % NMEADate.weekRolloverDays == 0)
            #expect(sut.trusted == (abs(sut.date.daysSinceEpoch - today) <= 1))
        }
    }

    @Test func readsTheDateOfAGPSDLogHeader() {
        let sut = NMEALogDecoder.headerDate(Array(" Date: 2017-1-9".utf8))
        #expect(sut == Date(timeIntervalSince1970: 1_483_920_000))
    }
}
