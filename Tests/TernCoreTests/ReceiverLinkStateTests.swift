import TernCore
import Testing

@Suite struct ReceiverLinkStateTests {
    @Test func goneNamesTheReasonAndThatTernKeepsTrying() {
        let sut = ReceiverLinkState.gone(reason: "hang-up or I/O error")
        #expect(sut.description == "receiver gone (hang-up or I/O error); reconnecting")
    }

    @Test func silentRoundsTheSecondsAndNamesWhatToCheck() {
        let sut = ReceiverLinkState.silent(seconds: 5.4)
        #expect(sut.description.hasPrefix("receiver silent for 5 s while powered"))
        #expect(sut.description.contains("baud rate"))
    }

    @Test func wrongBaudSuggestsAutobaud() {
        #expect(ReceiverLinkState.wrongBaud.description.contains("--autobaud"))
    }
}
