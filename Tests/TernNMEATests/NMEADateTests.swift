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

    @Test func decodingContextDefaultsToTheBuildReferenceDate() {
        #expect(NMEADecodingContext().referenceDate() == NMEADecodingContext.buildReferenceDate)
    }

    @Test func readsTheDateOfAGPSDLogHeader() {
        let sut = NMEALogDecoder.headerDate(Array(" Date: 2017-1-9".utf8))
        #expect(sut == Date(timeIntervalSince1970: 1_483_920_000))
    }
}
