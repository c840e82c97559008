import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// How one receiver cycle's sentences merge into a fix when they overlap or disagree, following gpsd's
/// NMEA driver (`driver_nmea0183.c`): later sentences win, times less than 10 ms apart are one cycle,
/// VTG only with course and speed and not in mode N or E, Garmin's PGRMZ altitude when GGA has none.
struct GPSDMergeRuleTests {
    /// 2026-11-24, the day of every sentence here.
    private static let day = Date(timeIntervalSince1970: 1_795_478_400)

    private static func gga(_ time: String, altitude: String = "120.0") -> String {
        sentence("GPGGA,\(time),4548.00000,N,01554.00000,E,1,08,0.9,\(altitude),M,45.0,M,,")
    }

    private static func rmc(_ time: String, knots: String = "10.0") -> String {
        sentence("GPRMC,\(time),A,4548.00000,N,01554.00000,E,\(knots),90.0,241126,,,A")
    }

    private static func gll(_ time: String) -> String { sentence("GPGLL,4548.00000,N,01554.00000,E,\(time),A,A") }

    private static func vtg(course: String = "45.0", knots: String = "20.0", mode: String = "A") -> String {
        sentence("GPVTG,\(course),T,,M,\(knots),N,,K,\(mode)")
    }

    private static func pgrmz(_ feet: String, unit: String = "f") -> String { sentence("PGRMZ,\(feet),\(unit),3") }

    /// The fixes the lines make, the pending epoch flushed at the end.
    private static func fixes(_ lines: [String], _ sut: NMEAFixAssembler = NMEAFixAssembler()) throws -> [Fix] {
        var sut = sut
        return try feed(&sut, lines) + [sut.flush()].compactMap { $0 }
    }

    private static func at(_ hhmmss: Double) -> Date { day.addingTimeInterval(hhmmss) }

    // Times less than 10 ms apart are one cycle; the epoch takes the latest time.

    @Test func timesAFewMillisecondsApartAreOneCycleAtTheLatestTime() throws {
        let sut = try Self.fixes([Self.gll("120000.303"), Self.gga("120000.30"), Self.rmc("120000.30")])
        #expect(sut.map(\.time) == [Self.at(12 * 3600 + 0.3)])
    }

    @Test func cyclesTenMillisecondsApartAreTwoEpochs() throws {
        let sut = try Self.fixes([Self.rmc("120000.99"), Self.gga("120000.99"), Self.rmc("120001.00"), Self.gga("120001.00")])
        #expect(sut.map(\.time) == [Self.at(12 * 3600 + 0.99), Self.at(12 * 3600 + 1)])
    }

    @Test func timesAcrossMidnightAFewMillisecondsApartAreOneCycle() {
        let before = NMEATimeOfDay(hour: 23, minute: 59, second: 59, millisecond: 997)
        let after = NMEATimeOfDay(hour: 0, minute: 0, second: 0, millisecond: 2)
        #expect(before.map { b in after.map { NMEAFixAssembler.sameCycle(b, $0) } ?? false } == true)
    }

    // VTG: later wins, but only with course and speed, and not estimated or invalid.

    @Test func aLaterVTGSpeedWinsOverRMC() throws {
        let sut = try Self.fixes([Self.rmc("120000"), Self.vtg(knots: "20.0"), Self.gga("120000")])
        #expect(abs((sut.first?.speed ?? 0) - 20 * RMCMessage.metresPerSecondPerKnot) < 1e-9)
        #expect(sut.first?.course == 45)
    }

    @Test func vtgGivesTheSpeedWhenRMCHasNone() throws {
        let sut = try Self.fixes([Self.rmc("120000", knots: ""), Self.vtg(knots: "20.0"), Self.gga("120000")])
        #expect(abs((sut.first?.speed ?? 0) - 20 * RMCMessage.metresPerSecondPerKnot) < 1e-9)
    }

    @Test func aDeadReckoningVTGIsIgnored() throws {
        let sut = try Self.fixes([Self.rmc("120000"), Self.vtg(mode: "E"), Self.gga("120000")])
        #expect(abs((sut.first?.speed ?? 0) - 10 * RMCMessage.metresPerSecondPerKnot) < 1e-9)
        #expect(sut.first?.course == 90)
    }

    @Test func aVTGWithoutCourseIsIgnored() throws {
        let sut = try Self.fixes([Self.rmc("120000"), Self.vtg(course: ""), Self.gga("120000")])
        #expect(sut.first?.course == 90)
        #expect(abs((sut.first?.speed ?? 0) - 10 * RMCMessage.metresPerSecondPerKnot) < 1e-9)
    }

    // Garmin PGRMZ: feet, used when the cycle's GGA has no altitude.

    @Test func pgrmzGivesTheAltitudeInMetresWhenGGAHasNone() throws {
        let sut = try Self.fixes([Self.rmc("120000"), Self.gll("120000"), Self.pgrmz("48")])
        #expect(abs((sut.first?.altitude ?? 0) - 14.6304) < 1e-9)
        #expect(sut.first?.mode == .threeD)
    }

    @Test func ggaAltitudeWinsOverPGRMZWhateverTheOrder() throws {
        let after = try Self.fixes([Self.gga("120000", altitude: "-9.1"), Self.pgrmz("-30"), Self.rmc("120000")])
        let before = try Self.fixes([Self.pgrmz("-30"), Self.gga("120000", altitude: "-9.1"), Self.rmc("120000")])
        #expect(after.first?.altitude == -9.1)
        #expect(before.first?.altitude == -9.1)
    }

    @Test func pgrmzInAnotherUnitThanFeetIsIgnored() throws {
        let sut = try Self.fixes([Self.rmc("120000"), Self.gll("120000"), Self.pgrmz("48", unit: "m")])
        #expect(sut.first?.altitude == nil)
    }

    // A sentence after its cycle's learnt end: a log decoder amends the epoch; a live reader drops it.

    /// Three GGA-only cycles teach GGA as the last sentence; then a cycle whose RMC comes after its GGA.
    private static let lateRMC = [Self.gga("120000"), Self.rmc("120000", knots: ""), Self.gga("120001"), Self.gga("120002"),
        Self.gga("120003"), Self.gga("120004"), Self.rmc("120004", knots: "10.0"), Self.gga("120005")]

    @Test func aLogDecoderAmendsAnEpochWithASentenceAfterItsLearntEnd() throws {
        let sut = try Self.fixes(Self.lateRMC, NMEAFixAssembler(amendsCompletedEpochs: true))
        let at4 = sut.filter { $0.time == Self.at(12 * 3600 + 4) }
        #expect(at4.count == 2)
        #expect(abs((at4.last?.speed ?? 0) - 10 * RMCMessage.metresPerSecondPerKnot) < 1e-9)
    }

    @Test func aLiveReaderDropsASentenceAfterItsEpochsLearntEnd() throws {
        var sut = NMEAFixAssembler()
        let fixes = try feed(&sut, Self.lateRMC) + [sut.flush()].compactMap { $0 }
        #expect(fixes.filter { $0.time == Self.at(12 * 3600 + 4) }.map(\.speed) == [nil])
        #expect(sut.stats.lateSentences == 1)
        #expect(sut.stats.amendedEpochs == 0)
    }
}
