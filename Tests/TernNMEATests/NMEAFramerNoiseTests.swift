import Testing

@testable import TernNMEA

struct NMEAFramerNoiseTests {
    @Test func acceptsCRCRLFLineEndings() {
        var sut = NMEAFramer()
        let sentences = sut.append(Array((Corpus.bu353GGA + "\r\r\n" + Corpus.bu353RMC + "\r\r\n").utf8))
        #expect(sentences.count == 2)
    }

    @Test func acceptsADoubledStartDelimiter() {
        var sut = NMEAFramer()
        #expect(sut.append(Array(("$" + Corpus.bu353GGA + "\r\n").utf8)).count == 1)
    }

    @Test func skipsUBXFramesInterleavedWithSentences() {
        var sut = NMEAFramer()
        // UBX NAV-PVT-like frame: sync chars, class/id, length, payload with '$', CR, LF and high bytes.
        let ubx: [UInt8] = [0xB5, 0x62, 0x01, 0x07, 0x08, 0x00, 0x24, 0x0D, 0x0A, 0xFF, 0x2A, 0x00, 0x80, 0x24, 0x12, 0x34]
        let stream = Corpus.bu353GGA.line + ubx + Corpus.bu353RMC.line + ubx + Corpus.bu353GSA.line
        #expect(sut.append(stream).map(\.type) == ["GGA", "RMC", "GSA"])
    }

    @Test func countsUBXBytesAsGarbage() {
        var sut = NMEAFramer()
        _ = sut.append([0xB5, 0x62, 0x01, 0x07] + Corpus.bu353GGA.line)
        #expect(sut.stats.garbageBytes == 4)
    }
}
