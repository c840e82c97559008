import Testing
import TernCore
@testable import TernUplink

@Suite struct MQTTBatchProgressTests {
    @Test func everyAcknowledgementMakesItDelivered() {
        var sut = MQTTBatchProgress(sequences: [4, 5, 6])
        for sequence in [6, 4, 5] as [Int64] { sut.acknowledge(sequence) }

        #expect(sut.isComplete)
        #expect(sut.result(ending: nil) == .delivered)
    }

    @Test func aFailureReportsOnlyTheContiguousAcknowledgedPrefix() {
        var sut = MQTTBatchProgress(sequences: [4, 5, 6, 7])
        sut.acknowledge(4)
        sut.acknowledge(5)
        sut.acknowledge(7)  // 6 is missing: 7 cannot be acknowledged to the queue yet

        #expect(!sut.isComplete)
        #expect(sut.result(ending: .retryable("reset")) == .partial(through: 5, rest: .retryable(reason: "reset")))
    }

    @Test func aFailureBeforeAnyAcknowledgementIsTheFailureItself() {
        let sut = MQTTBatchProgress(sequences: [4, 5])

        #expect(sut.result(ending: .permanent("bad password")) == .permanent(reason: "bad password"))
    }

    @Test func aPositionThatCouldNotBeWrittenEndsTheBatchAsRejectedAfterTheOthers() {
        var sut = MQTTBatchProgress(sequences: [4, 5], rejected: .init(sequence: 6, reason: "NaN"))
        sut.acknowledge(4)
        sut.acknowledge(5)

        #expect(sut.result(ending: nil) == .partial(through: 5, rest: .rejected(sequence: 6, reason: "NaN")))
    }

    @Test func aRejectedFirstPositionIsRejectedAlone() {
        let sut = MQTTBatchProgress(sequences: [], rejected: .init(sequence: 4, reason: "NaN"))

        #expect(sut.isComplete)
        #expect(sut.result(ending: nil) == .rejected(sequence: 4, reason: "NaN"))
    }

    @Test func acknowledgementsOfOtherBatchesDoNotCount() {
        var sut = MQTTBatchProgress(sequences: [4])
        sut.acknowledge(3)

        #expect(!sut.isComplete)
    }
}
