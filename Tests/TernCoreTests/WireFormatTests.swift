import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct WireFormatTests {
    @Test func timeIsISO8601UTCWithMilliseconds() {
        #expect(WireTime.format(Date(timeIntervalSince1970: 1_795_219_200.25)) == "2026-11-21T00:00:00.250Z")
    }

    @Test func timesAreRoundedToTheMillisecondNotTruncated() {
        // 13:56:51.997 has no exact binary fraction; a truncating formatter prints .996.
        #expect(WireTime.format(Date(timeIntervalSince1970: 1_260_021_411.997)) == "2009-12-05T13:56:51.997Z")
        #expect(WireTime.format(Date(timeIntervalSince1970: 1_260_021_411.9996)) == "2009-12-05T13:56:52.000Z")
    }

    @Test func batchRoundTripsThroughJSON() throws {
        let queued = [QueuedPosition(sequence: 3, position: .fixture(seconds: 1.5))]
        let sut = WireBatch(device: "tern-01", queued: queued)
        let data = try WireBatch.encoder().encode(sut)
        #expect(try WireBatch.decoder().decode(WireBatch.self, from: data) == sut)
    }

    @Test func positionCarriesItsStableIdAndSequence() {
        let position = Position.fixture()
        let sut = WirePosition(QueuedPosition(sequence: 9, position: position))
        #expect(sut.id == position.id)
        #expect(sut.seq == 9)
    }
}
