import Foundation
import TernCore
import Testing

@testable import TernNMEA

struct NMEAWriterTests {
    let fix = Fix(
        time: Date(timeIntervalSince1970: 1_763_692_200.25),  // 2025-11-21T02:30:00.25Z
        coordinate: Coordinate(latitude: 45.812345, longitude: -15.977777),
        altitude: 120.5, speed: 1.25, course: 87.5, quality: .dgps, satellites: 9, hdop: 0.9)

    /// Writer output through a framer, decoder and assembler, as the receiver would see it.
    func roundTrip(_ lines: [String]) throws -> (fixes: [Fix], stats: NMEAFixAssemblerStats) {
        var framer = NMEAFramer()
        var sut = NMEAFixAssembler()
        let decoder = NMEADecoder(context: NMEADecodingContext(referenceDate: { Date(timeIntervalSince1970: 1_763_692_200) }))
        var fixes: [Fix] = []
        for sentence in framer.append(Array(lines.joined().utf8)) {
            fixes += sut.add(try decoder.decode(sentence))
        }
        if let fix = sut.flush() { fixes.append(fix) }
        #expect(framer.stats.sentences == lines.count)
        return (fixes, sut.stats)
    }

    @Test func writesAGGASentenceWithChecksumAndCRLF() {
        let sut = NMEAWriter()
        #expect(
            sut.gga(fix) == "$GPGGA,023000.25,4548.74070,N,01558.66662,W,2,09,0.90,120.5,M,,M,,*51\r\n")
    }

    @Test func writesARMCSentenceWithKnotsAndDate() {
        let sut = NMEAWriter(talker: "GN")
        #expect(
            sut.rmc(fix) == "$GNRMC,023000.25,A,4548.74070,N,01558.66662,W,2.430,87.50,211125,,,D*58\r\n")
    }

    @Test func roundTripsAFixThroughFramerAndAssembler() throws {
        let sut = NMEAWriter()
        let result = try roundTrip(sut.sentences(for: fix))
        let decoded = try #require(result.fixes.first)
        #expect(abs(decoded.time.timeIntervalSince(fix.time)) < 0.001)
        #expect(abs(decoded.coordinate.latitude - fix.coordinate.latitude) < 1e-6)
        #expect(abs(decoded.coordinate.longitude - fix.coordinate.longitude) < 1e-6)
        #expect(decoded.altitude == fix.altitude)
        #expect(abs((decoded.speed ?? 0) - 1.25) < 0.001)
        #expect(decoded.course == fix.course)
        #expect(decoded.quality == .dgps)
        #expect(decoded.satellites == 9)
        #expect(decoded.hdop == 0.9)
    }

    @Test func roundTripsConsecutiveFixesAsSeparateEpochs() throws {
        let sut = NMEAWriter()
        var next = fix
        next.time += 1
        let result = try roundTrip(sut.sentences(for: fix) + sut.sentences(for: next))
        #expect(result.fixes.map(\.time.timeIntervalSince1970) == [fix.time.timeIntervalSince1970, next.time.timeIntervalSince1970])
    }

    @Test func roundTripsTheNoFixVariantAsAnInvalidEpoch() throws {
        let sut = NMEAWriter()
        let result = try roundTrip(sut.noFixSentences(at: fix.time))
        #expect(result.fixes.isEmpty)
        #expect(result.stats.invalidEpochs == 1)
    }

    @Test func roundsMinutesWithoutWritingSixty() {
        let position = NMEAWriter.position(Coordinate(latitude: 9.9999999999, longitude: 0))
        #expect(position.0 == "1000.00000")
    }

    @Test func writesNegativeFixedPointWithoutLocale() {
        #expect(NMEAWriter.fixed(-21.25, 1) == "-21.3")
    }
}
