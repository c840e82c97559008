import Foundation
import Testing
import TernCore
import TernTesting

@Suite struct WireFormatTests {
    @Test func timeIsISO8601UTCWithMilliseconds() {
        #expect(WireTime.format(Date(timeIntervalSince1970: 1_795_219_200.25)) == "2026-11-21T00:00:00.250Z")
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
