import Testing

@testable import TernReceivers

@Suite struct UBXFramerTests {
    static let ack = UBXFrame(messageClass: 0x05, messageID: 0x01, payload: [0x06, 0x00])
    static let monVer = UBXFrame(messageClass: 0x0A, messageID: 0x04, payload: Array(repeating: 0x41, count: 40))
    // gpsd regression suite (BSD-2-Clause), ublox-8.log.
    static let gga = Array("$GNGGA,000941.00,4404.13387,N,12118.85628,W,1,12,1.01,1144.8,M,-21.4,M,,*4D\r\n".utf8)
    /// Constructed (checksum computed independently).
    static let txt = Array("$GNTXT,01,01,02,PROTVER=18.00*11\r\n".utf8)

    /// Feeds `stream` in two parts split at `split`, collecting everything.
    private func feed(_ stream: [UInt8], splitAt split: Int) -> [UBXFramer.Output] {
        var sut = UBXFramer()
        return sut.append(stream[..<split]) + sut.append(stream[split...])
    }

    private func frames(_ outputs: [UBXFramer.Output]) -> [UBXFrame] {
        outputs.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    private func text(_ outputs: [UBXFramer.Output]) -> [UInt8] {
        outputs.flatMap { output -> [UInt8] in
            if case .text(let text) = output { return text }
            return []
        }
    }

    @Test func extractsAFrameBetweenNMEALines() {
        var sut = UBXFramer()
        let outputs = sut.append(Self.gga + Self.ack.bytes + Self.txt)
        #expect(outputs == [.text(Self.gga), .frame(Self.ack), .text(Self.txt)])
    }

    @Test func everySplitPointYieldsTheSameFramesAndText() {
        let stream = Self.gga + Self.ack.bytes + Self.txt + Self.monVer.bytes + Self.gga
        for split in 0...stream.count {
            let outputs = feed(stream, splitAt: split)
            #expect(frames(outputs) == [Self.ack, Self.monVer], "split at \(split)")
            #expect(text(outputs) == Self.gga + Self.txt + Self.gga, "split at \(split)")
        }
    }

    @Test func byteByByteFeedingFindsEveryFrame() {
        var sut = UBXFramer()
        let outputs = (Self.ack.bytes + Self.gga + Self.monVer.bytes).flatMap { sut.append([$0]) }
        #expect(frames(outputs) == [Self.ack, Self.monVer])
    }

    @Test func aBadChecksumIsCountedAndTheFollowingFrameStillFound() {
        var corrupted = Self.ack.bytes
        corrupted[7] ^= 0xFF
        var sut = UBXFramer()
        let outputs = sut.append(corrupted + Self.monVer.bytes)
        #expect(frames(outputs) == [Self.monVer])
        #expect(sut.stats.checksumErrors == 1)
    }

    @Test func aFrameInsideAFalseStartIsFound() {
        // A stray B5 62 with a long declared length swallows the real frame until its checksum fails.
        let falseStart: [UInt8] = [0xB5, 0x62, 0x01, 0x07, 0x10, 0x00]
        var sut = UBXFramer()
        let outputs = sut.append(falseStart + Self.ack.bytes + [UInt8](repeating: 0x20, count: 16))
        #expect(frames(outputs) == [Self.ack])
    }

    @Test func anImplausibleLengthIsRejectedWithoutWaiting() {
        var sut = UBXFramer(maxPayloadLength: 64)
        let outputs = sut.append([0xB5, 0x62, 0x0A, 0x04, 0xFF, 0xFF] + Self.ack.bytes)
        #expect(frames(outputs) == [Self.ack])
        #expect(sut.stats.overlong == 1)
    }

    @Test func garbageBeforeAFrameIsPassedOnAsText() {
        let garbage: [UInt8] = [0x00, 0xB5, 0x00, 0xFF, 0xB5, 0xB5]
        var sut = UBXFramer()
        let outputs = sut.append(garbage + Self.ack.bytes)
        #expect(outputs == [.text(garbage), .frame(Self.ack)])
    }

    @Test func aLoneSyncByteIsHeldUntilTheNextByte() {
        var sut = UBXFramer()
        #expect(sut.append([0xB5]) == [])
        #expect(sut.append([0x24]) == [.text([0xB5, 0x24])])
    }

    @Test func anIncompleteFrameIsHeldNotEmitted() {
        var sut = UBXFramer()
        #expect(sut.append(Self.ack.bytes.dropLast()) == [])
        #expect(sut.append(Self.ack.bytes.suffix(1)) == [.frame(Self.ack)])
    }

    @Test func anEmptyPayloadFrameIsExtracted() {
        var sut = UBXFramer()
        #expect(sut.append(UBXMessages.pollVersion.bytes) == [.frame(UBXMessages.pollVersion)])
    }
}
