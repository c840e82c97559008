import Testing
@testable import TernUplink

@Suite struct MQTTSessionTests {
    private func message(_ sequence: Int64) -> MQTTOutgoing {
        MQTTOutgoing(sequence: sequence, topic: "t", payload: [])
    }

    @Test func packetIDsWrapAfter65535AndSkipIdsStillInFlight() {
        var sut = MQTTSession()
        _ = sut.add([message(0)])
        let held = sut.sendNext(window: 2)  // id 1 stays in flight
        for sequence in Int64(1)...65_534 {
            _ = sut.add([message(sequence)])
            if let entry = sut.sendNext(window: 2) { _ = sut.acknowledge(packetID: entry.packetID) }
        }
        _ = sut.add([message(70_000)])

        let next = sut.sendNext(window: 2)

        #expect(held?.packetID == 1)
        #expect(next?.packetID == 2)
    }

    @Test func theWindowBoundsWhatIsInFlight() {
        var sut = MQTTSession()
        _ = sut.add((1...5).map(message))

        var sent = 0
        while sut.sendNext(window: 3) != nil { sent += 1 }

        #expect(sent == 3)
        #expect(sut.pending.count == 2)
    }

    @Test func acknowledgedSequencesAreRememberedUpToALimit() {
        var sut = MQTTSession()
        let count = Int64(MQTTSession.acknowledgedMemory + 1)
        for sequence in 1...count {
            _ = sut.add([message(sequence)])
            if let entry = sut.sendNext(window: 1) { _ = sut.acknowledge(packetID: entry.packetID) }
        }

        #expect(sut.add([message(1), message(2), message(count)]) == [2, count])
    }
}
