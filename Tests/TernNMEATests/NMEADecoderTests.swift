import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// Frames and decodes one line of corpus text.
func decode(_ line: String, reference: Date = Date(timeIntervalSince1970: 1_700_000_000)) throws -> NMEAMessage {
    var framer = NMEAFramer()
    let sentence = try #require(framer.append(line.line).first)
    return try NMEADecoder(context: NMEADecodingContext(referenceDate: { reference })).decode(sentence)
}

struct GGAMessageTests {
    @Test func decodesTimeOfDayWithFraction() throws {
        guard case let .gga(sut) = try decode(Corpus.neoGGA) else { Issue.record("not GGA"); return }
        #expect(sut.time == NMEATimeOfDay(hour: 17, minute: 19, second: 26))
    }

    @Test func decodesSouthEastPositionAsNegativeLatitude() throws {
        guard case let .gga(sut) = try decode(Corpus.bu353GGA) else { Issue.record("not GGA"); return }
        let coordinate = try #require(sut.coordinate)
        #expect(abs(coordinate.latitude - -37.784788333) < 1e-8)
        #expect(abs(coordinate.longitude - 175.314896667) < 1e-8)
    }

    @Test func decodesNorthWestPositionAsNegativeLongitude() throws {
        guard case let .gga(sut) = try decode(Corpus.neoGGA) else { Issue.record("not GGA"); return }
        let coordinate = try #require(sut.coordinate)
        #expect(abs(coordinate.latitude - 44.0690105) < 1e-8)
        #expect(abs(coordinate.longitude - -121.314246333) < 1e-8)
    }

    @Test func decodesQualitySatellitesHDOPAltitudeAndGeoid() throws {
        guard case let .gga(sut) = try decode(Corpus.neoGGA) else { Issue.record("not GGA"); return }
        #expect(sut.quality == .gps)
        #expect(sut.satellites == 12)
        #expect(sut.hdop == 0.91)
        #expect(sut.altitude == 1147.2)
        #expect(sut.geoidSeparation == -21.3)
        #expect(sut.talker == "GN")
    }

    @Test func decodesAnAcquiringReceiverAsInvalidWithoutPosition() throws {
        guard case let .gga(sut) = try decode(Corpus.acquiringGGA) else { Issue.record("not GGA"); return }
        #expect(sut.quality == .invalid)
        #expect(sut.coordinate == nil)
    }

    @Test func rejectsMinutesOfSixtyOrMore() throws {
        let sentence = NMEASentence(
            talker: "GP", type: "GGA",
            fields: ["030719.000", "3760.0000", "S", "17518.8938", "E", "1", "08", "1.1", "59.9", "M", "", "M", "", ""],
            raw: "")
        #expect(throws: NMEADecodingError.self) { try GGAMessage(sentence, context: NMEADecodingContext()) }
    }

    @Test func rejectsASentenceWithoutTime() {
        let sentence = NMEASentence(talker: "GP", type: "GGA", fields: ["", "", "", "", "", "0"], raw: "")
        #expect(throws: NMEADecodingError.missingField(sentence: "GGA", field: "time")) {
            try GGAMessage(sentence, context: NMEADecodingContext())
        }
    }
}

struct RMCMessageTests {
    @Test func decodesActiveStatusAsValid() throws {
        guard case let .rmc(sut) = try decode(Corpus.bu353RMC) else { Issue.record("not RMC"); return }
        #expect(sut.isValid)
    }

    @Test func convertsSpeedFromKnotsToMetresPerSecond() throws {
        guard case let .rmc(sut) = try decode(Corpus.bu353RMC) else { Issue.record("not RMC"); return }
        #expect(abs((sut.speed ?? 0) - 0.355) < 0.001)
        #expect(sut.course == 181.39)
    }

    @Test func leavesAnEmptyCourseNil() throws {
        guard case let .rmc(sut) = try decode(Corpus.neoRMC) else { Issue.record("not RMC"); return }
        #expect(sut.course == nil)
    }

    @Test func resolvesTheTwoDigitYearAgainstTheReferenceDate() throws {
        guard case let .rmc(sut) = try decode(Corpus.bu353RMC) else { Issue.record("not RMC"); return }
        #expect(sut.date == NMEADate(year: 2014, month: 12, day: 31))
    }

    @Test func resolvesTheTwoDigitYearIntoThePreviousCenturyWhenCloser() {
        let reference = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01
        #expect(NMEADate.resolve(twoDigitYear: 99, reference: reference) == 1999)
    }

    @Test func decodesVoidStatusAsInvalid() throws {
        guard case let .rmc(sut) = try decode(Corpus.acquiringRMC) else { Issue.record("not RMC"); return }
        #expect(!sut.isValid)
        #expect(sut.coordinate == nil)
    }

    @Test func treatsModeNAsInvalidEvenWithStatusA() throws {
        let sut = RMCMessage(
            time: try #require(NMEATimeOfDay(hour: 1, minute: 0, second: 0)),
            statusActive: true, coordinate: nil, date: nil, mode: "N")
        #expect(!sut.isValid)
    }
}

struct NMEADecoderTests {
    @Test func passesUnknownSentenceTypesThroughAsUnsupported() throws {
        guard case .unsupported = try decode(Corpus.garminRMB) else { Issue.record("decoded RMB"); return }
    }

    @Test func passesProprietarySentencesThroughAsUnsupported() throws {
        guard case .unsupported = try decode(Corpus.garminPGRME) else { Issue.record("decoded PGRME"); return }
    }
}
