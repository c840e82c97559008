import Testing

@testable import TernNMEA

struct NMEAFramerTests {
    @Test func deliversASentenceSplitAcrossManyReads() {
        var sut = NMEAFramer()
        var sentences: [NMEASentence] = []
        for byte in Corpus.bu353GGA.line {
            sentences += sut.append([byte])
        }
        #expect(sentences.map(\.raw) == [Corpus.bu353GGA])
    }

    @Test(arguments: ["\r\n", "\n", "\r"])
    func acceptsEveryLineEnding(_ ending: String) {
        var sut = NMEAFramer()
        let sentences = sut.append(Array((Corpus.bu353GGA + ending + Corpus.bu353RMC + ending).utf8))
        #expect(sentences.map(\.type) == ["GGA", "RMC"])
    }

    @Test func splitsAddressIntoTalkerAndType() throws {
        var sut = NMEAFramer()
        let sentences = sut.append(Corpus.neoGGA.line)
        let sentence = try #require(sentences.first)
        #expect(sentence.talker == "GN")
        #expect(sentence.type == "GGA")
    }

    @Test func keepsEmptyFieldsInPosition() throws {
        var sut = NMEAFramer()
        let sentences = sut.append(Corpus.bu353GSA.line)
        let sentence = try #require(sentences.first)
        #expect(sentence.fields.count == 17)
        #expect(sentence.fields[14] == "1.8")
        #expect(sentence.field(13) == nil)
    }

    @Test func skipsGarbageBetweenSentencesAndCountsIt() {
        var sut = NMEAFramer()
        let sentences = sut.append(Corpus.bu353GGA.line + Array("xyz".utf8) + [0xB5, 0x62] + Corpus.bu353RMC.line)
        #expect(sentences.count == 2)
        #expect(sut.stats.garbageBytes == 5)
    }

    @Test func blankLinesAreNotGarbage() {
        var sut = NMEAFramer()
        _ = sut.append(Array("\r\n\r\n".utf8) + Corpus.bu353GGA.line)
        #expect(sut.stats.garbageBytes == 0)
    }

    @Test func binaryNoiseInsideASentenceAbandonsIt() {
        var sut = NMEAFramer()
        let broken = Array("$GPGGA,0307".utf8) + [0x00, 0xFF] + Array("19.000\r\n".utf8)
        let sentences = sut.append(broken + Corpus.bu353RMC.line)
        #expect(sentences.map(\.type) == ["RMC"])
        #expect(sut.stats.missingChecksum == 0)
    }

    @Test func startDelimiterMidLineRestartsTheSentence() {
        var sut = NMEAFramer()
        let sentences = sut.append(Array("$GPGSV,3,1,12,17,72".utf8) + Corpus.bu353GGA.line)
        #expect(sentences.map(\.raw) == [Corpus.bu353GGA])
        #expect(sut.stats.garbageBytes == 19)
    }

    @Test func dropsAnOverlongLineAndCountsIt() {
        var sut = NMEAFramer()
        let overlong = "$GPTXT," + String(repeating: "A", count: 120) + "*00"
        let sentences = sut.append(overlong.line + Corpus.bu353GGA.line)
        #expect(sentences.map(\.type) == ["GGA"])
        #expect(sut.stats.overlong == 1)
        #expect(sut.stats.garbageBytes == 0)
    }

    @Test func acceptsALineJustBelowTheLengthLimit() {
        var sut = NMEAFramer(maxLineLength: Corpus.bu353GGA.count + 1)
        #expect(sut.append(Corpus.bu353GGA.line).count == 1)
    }

    @Test func dropsALineAtTheLengthLimit() {
        var sut = NMEAFramer(maxLineLength: Corpus.bu353GGA.count)
        #expect(sut.append(Corpus.bu353GGA.line).isEmpty)
        #expect(sut.stats.overlong == 1)
    }

    @Test func acceptsLowerCaseChecksumDigits() {
        var sut = NMEAFramer()
        let lower = Corpus.bu353GGA.replacingOccurrences(of: "*7D", with: "*7d")
        #expect(sut.append(lower.line).count == 1)
    }

    @Test func rejectsAWrongChecksumAndCountsIt() {
        var sut = NMEAFramer()
        let wrong = Corpus.bu353GGA.replacingOccurrences(of: "*7D", with: "*7E")
        #expect(sut.append(wrong.line).isEmpty)
        #expect(sut.stats.checksumErrors == 1)
    }

    @Test func rejectsACorruptedFieldByItsChecksum() {
        var sut = NMEAFramer()
        let corrupted = Corpus.bu353GGA.replacingOccurrences(of: "3747.0873", with: "3747.0878")
        #expect(sut.append(corrupted.line).isEmpty)
        #expect(sut.stats.checksumErrors == 1)
    }

    @Test func rejectsATruncatedChecksumAsAChecksumError() {
        var sut = NMEAFramer()
        #expect(sut.append(String(Corpus.bu353GGA.dropLast()).line).isEmpty)
        #expect(sut.stats.checksumErrors == 1)
    }

    @Test func rejectsASentenceWithoutChecksumAndCountsIt() {
        var sut = NMEAFramer()
        let bare = String(Corpus.bu353GGA.dropLast(3))
        #expect(sut.append(bare.line).isEmpty)
        #expect(sut.stats.missingChecksum == 1)
    }

    @Test func passesProprietarySentencesThroughWithTalkerP() throws {
        var sut = NMEAFramer()
        let sentences = sut.append(Corpus.garminPGRME.line)
        let sentence = try #require(sentences.first)
        #expect(sentence.talker == "P")
        #expect(sentence.type == "GRME")
        #expect(sentence.isProprietary)
    }

    @Test func framesEncapsulationSentencesStartingWithBang() throws {
        var sut = NMEAFramer()
        let sentences = sut.append(Corpus.aisVDM.line)
        let sentence = try #require(sentences.first)
        #expect(sentence.talker == "AI")
        #expect(sentence.type == "VDM")
    }

    @Test func countsDeliveredSentences() {
        var sut = NMEAFramer()
        _ = sut.append(Corpus.bu353GGA.line + Corpus.bu353GSA.line + Corpus.bu353RMC.line)
        #expect(sut.stats.sentences == 3)
    }
}

struct NMEAChecksumTests {
    @Test func computesTheXorOfTheBody() {
        #expect(NMEAChecksum.hex(NMEAChecksum.compute("GPGGA,123519".utf8)) == "77")
    }

    @Test func writesUpperCaseHex() {
        #expect(NMEAChecksum.hex(0xAB) == "AB")
    }
}
