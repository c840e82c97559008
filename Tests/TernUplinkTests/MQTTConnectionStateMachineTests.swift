import Testing
@testable import TernUplink

@Suite struct MQTTConnectionStateMachineTests {
    private static let connect = MQTTConnect(
        clientID: "tern-pi", cleanSession: false, keepAliveSeconds: 60, username: "alice", password: Array("pw".utf8))

    private func makeSUT(window: Int = 2) -> MQTTConnectionStateMachine {
        MQTTConnectionStateMachine(configuration: .init(
            connect: Self.connect, broker: "broker b:1883", window: window, connectTimeout: .seconds(5),
            responseTimeout: .seconds(10)))
    }

    private func messages(_ sequences: ClosedRange<Int64>) -> [MQTTOutgoing] {
        sequences.map { MQTTOutgoing(sequence: $0, topic: "owntracks/alice/pi", payload: Array("\($0)".utf8)) }
    }

    private func publish(_ sequence: Int64, id: UInt16, dup: Bool = false) -> MQTTConnectionStateMachine.Action {
        .send(.publish(MQTTPublish(
            topic: "owntracks/alice/pi", payload: Array("\(sequence)".utf8), qos: .atLeastOnce, dup: dup, packetID: id)))
    }

    /// Publishes `sequences` from disconnected and takes the connection to CONNACK at `now`.
    private func connected(
        _ sut: inout MQTTConnectionStateMachine, publishing sequences: ClosedRange<Int64>, now: Duration = .zero
    ) -> [MQTTConnectionStateMachine.Action] {
        _ = sut.handle(.publish(messages(sequences), now: now))
        _ = sut.handle(.transportOpened(now: now))
        return sut.handle(.received(.connAck(sessionPresent: true, returnCode: .accepted), now: now))
    }

    private func failure(_ actions: [MQTTConnectionStateMachine.Action]) -> MQTTFailure? {
        actions.lazy.compactMap { if case let .failed(failure) = $0 { failure } else { nil } }.first
    }

    @Test func publishingWhileDisconnectedOpensTheTransportWithADeadline() {
        var sut = makeSUT()

        let actions = sut.handle(.publish(messages(1...1), now: .seconds(3)))

        #expect(actions == [.openTransport, .wake(at: .seconds(8))])
        #expect(sut.state == .connecting(deadline: .seconds(8)))
    }

    @Test func anOpenedTransportIsGreetedWithTheConfiguredConnect() {
        var sut = makeSUT()
        _ = sut.handle(.publish(messages(1...1), now: .zero))

        #expect(sut.handle(.transportOpened(now: .seconds(1))) == [.send(.connect(Self.connect))])
        #expect(sut.state == .awaitingConnAck(deadline: .seconds(5)))
    }

    @Test func anAcceptedConnectionSendsUpToTheWindowAndWaitsForAcknowledgements() {
        var sut = makeSUT(window: 2)

        let actions = connected(&sut, publishing: 1...3)

        #expect(actions == [publish(1, id: 1), publish(2, id: 2), .wake(at: .seconds(10))])
    }

    @Test func eachAcknowledgementDeliversItsSequenceAndMakesRoomForTheNext() {
        var sut = makeSUT(window: 2)
        _ = connected(&sut, publishing: 1...3)

        let first = sut.handle(.received(.pubAck(packetID: 1), now: .seconds(1)))
        let second = sut.handle(.received(.pubAck(packetID: 2), now: .seconds(2)))
        let third = sut.handle(.received(.pubAck(packetID: 3), now: .seconds(3)))

        #expect(first == [.delivered(sequence: 1), publish(3, id: 3), .wake(at: .seconds(11))])
        #expect(second == [.delivered(sequence: 2), .wake(at: .seconds(12))])
        #expect(third == [.delivered(sequence: 3), .wake(at: .seconds(61))])
    }

    @Test func anAcknowledgementForAnIdNotInFlightIsIgnored() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)

        #expect(sut.handle(.received(.pubAck(packetID: 9), now: .seconds(1))).isEmpty)
    }

    @Test func unacknowledgedMessagesAreRetransmittedWithDupAndTheirIdsAfterAReconnect() {
        var sut = makeSUT(window: 2)
        _ = connected(&sut, publishing: 1...3)
        _ = sut.handle(.received(.pubAck(packetID: 1), now: .seconds(1)))  // 1 delivered; 2 (id 2), 3 (id 3) in flight

        let lost = sut.handle(.transportLost(.retryable("connection reset")))
        _ = sut.handle(.publish(messages(2...4), now: .seconds(5)))
        _ = sut.handle(.transportOpened(now: .seconds(5)))
        let resumed = sut.handle(.received(.connAck(sessionPresent: true, returnCode: .accepted), now: .seconds(5)))

        #expect(lost == [.failed(.retryable("connection reset"))])
        #expect(resumed == [publish(2, id: 2, dup: true), publish(3, id: 3, dup: true), .wake(at: .seconds(15))])
        #expect(sut.retransmissions == 2)
        let afterAck = sut.handle(.received(.pubAck(packetID: 2), now: .seconds(6)))
        #expect(afterAck == [.delivered(sequence: 2), publish(4, id: 4), .wake(at: .seconds(16))])
    }

    @Test func messagesNeverSentAreForgottenWhenTheConnectionFails() {
        var sut = makeSUT(window: 1)
        _ = connected(&sut, publishing: 1...3)  // 1 in flight, 2 and 3 waiting
        _ = sut.handle(.transportLost(.retryable("reset")))

        _ = sut.handle(.publish(messages(1...1), now: .seconds(1)))
        _ = sut.handle(.transportOpened(now: .seconds(1)))
        let resumed = sut.handle(.received(.connAck(sessionPresent: true, returnCode: .accepted), now: .seconds(1)))

        #expect(resumed == [publish(1, id: 1, dup: true), .wake(at: .seconds(11))])
    }

    @Test func aBatchRepeatingAcknowledgedMessagesDeliversThemWithoutSendingThemAgain() {
        var sut = makeSUT(window: 4)
        _ = connected(&sut, publishing: 1...2)
        _ = sut.handle(.received(.pubAck(packetID: 1), now: .seconds(1)))
        _ = sut.handle(.received(.pubAck(packetID: 2), now: .seconds(1)))

        let actions = sut.handle(.publish(messages(1...3), now: .seconds(2)))

        #expect(actions == [.delivered(sequence: 1), .delivered(sequence: 2), publish(3, id: 3), .wake(at: .seconds(12))])
    }

    @Test func aBatchOfOnlyAcknowledgedMessagesDoesNotConnect() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)
        _ = sut.handle(.received(.pubAck(packetID: 1), now: .seconds(1)))
        _ = sut.handle(.transportLost(.retryable("idle connection dropped")))

        #expect(sut.handle(.publish(messages(1...1), now: .seconds(2))) == [.delivered(sequence: 1)])
        #expect(sut.state == .disconnected)
    }

    @Test(arguments: [MQTTConnectReturnCode.badUsernameOrPassword, .notAuthorized])
    func refusedCredentialsArePermanentAndNameTheKeys(code: MQTTConnectReturnCode) throws {
        var sut = makeSUT()
        _ = sut.handle(.publish(messages(1...1), now: .zero))
        _ = sut.handle(.transportOpened(now: .zero))

        let actions = sut.handle(.received(.connAck(sessionPresent: false, returnCode: code), now: .zero))

        #expect(actions.first == .closeTransport)
        guard case let .permanent(reason) = try #require(failure(actions)) else {
            Issue.record("expected a permanent failure, got \(actions)")
            return
        }
        #expect(reason.contains("uplink.username") && reason.contains("uplink.password"))
        #expect(reason.contains("CONNACK \(code.rawValue)"))
        #expect(sut.state == .disconnected)
    }

    @Test func anUnavailableBrokerIsRetryable() {
        var sut = makeSUT()
        _ = sut.handle(.publish(messages(1...1), now: .zero))
        _ = sut.handle(.transportOpened(now: .zero))

        let actions = sut.handle(.received(.connAck(sessionPresent: false, returnCode: .serverUnavailable), now: .zero))

        guard case .retryable = failure(actions) else {
            Issue.record("expected a retryable failure, got \(actions)")
            return
        }
    }

    @Test func aServerAnsweringConnectWithGarbageIsPermanentAndNamesUplinkURL() {
        var sut = makeSUT()
        _ = sut.handle(.publish(messages(1...1), now: .zero))
        _ = sut.handle(.transportOpened(now: .zero))

        let actions = sut.handle(.malformed(reason: "unexpected packet type 4"))

        guard case let .permanent(reason) = failure(actions) else {
            Issue.record("expected a permanent failure, got \(actions)")
            return
        }
        #expect(reason.contains("uplink.url"))
    }

    @Test func noConnectionWithinTheConnectTimeoutIsRetryable() {
        var sut = makeSUT()
        _ = sut.handle(.publish(messages(1...1), now: .zero))

        #expect(sut.handle(.tick(now: .seconds(4))) == [.wake(at: .seconds(5))])
        let actions = sut.handle(.tick(now: .seconds(5)))

        #expect(actions.first == .closeTransport)
        guard case .retryable = failure(actions) else {
            Issue.record("expected a retryable failure, got \(actions)")
            return
        }
        #expect(sut.state == .disconnected)
    }

    @Test func noConnAckWithinTheConnectTimeoutIsRetryable() {
        var sut = makeSUT()
        _ = sut.handle(.publish(messages(1...1), now: .zero))
        _ = sut.handle(.transportOpened(now: .seconds(1)))

        let actions = sut.handle(.tick(now: .seconds(5)))

        #expect(failure(actions)?.reason.contains("did not answer CONNECT") == true)
    }

    @Test func messagesLeftUnacknowledgedPastTheResponseTimeoutEndTheConnection() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...2)

        #expect(sut.handle(.tick(now: .seconds(9))) == [.wake(at: .seconds(10))])
        let actions = sut.handle(.tick(now: .seconds(10)))

        #expect(actions.first == .closeTransport)
        #expect(failure(actions)?.reason.contains("acknowledged none of 2 messages") == true)
    }

    @Test func aQuietConnectionPingsAtTheKeepaliveAndStaysUpWhileAnswered() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)
        _ = sut.handle(.received(.pubAck(packetID: 1), now: .seconds(1)))  // we last sent at 0: ping due at 60

        #expect(sut.handle(.tick(now: .seconds(59))) == [.wake(at: .seconds(60))])
        #expect(sut.handle(.tick(now: .seconds(60))) == [.send(.pingReq), .wake(at: .seconds(70))])
        #expect(sut.handle(.received(.pingResp, now: .seconds(61))) == [.wake(at: .seconds(120))])
        #expect(sut.handle(.tick(now: .seconds(120))) == [.send(.pingReq), .wake(at: .seconds(130))])
    }

    @Test func anUnansweredPingEndsTheConnection() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)
        _ = sut.handle(.received(.pubAck(packetID: 1), now: .zero))
        _ = sut.handle(.tick(now: .seconds(60)))

        let actions = sut.handle(.tick(now: .seconds(70)))

        #expect(actions.first == .closeTransport)
        #expect(failure(actions)?.reason.contains("PINGREQ") == true)
    }

    @Test func publishingPostponesThePing() {
        var sut = makeSUT(window: 4)
        _ = connected(&sut, publishing: 1...1)
        _ = sut.handle(.received(.pubAck(packetID: 1), now: .seconds(1)))

        _ = sut.handle(.publish(messages(2...2), now: .seconds(30)))
        _ = sut.handle(.received(.pubAck(packetID: 2), now: .seconds(31)))

        #expect(sut.state == .connected(.init(nextPing: .seconds(90))))
    }

    @Test func anUnexpectedPacketFromTheBrokerEndsTheConnection() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)

        let actions = sut.handle(.received(.pingReq, now: .seconds(1)))

        #expect(actions.first == .closeTransport)
        #expect(sut.state == .disconnected)
    }

    @Test func shutdownSaysDisconnectSoTheBrokerDropsTheWill() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)

        let actions = sut.handle(.shutdown)

        #expect(actions.prefix(2) == [.send(.disconnect), .closeTransport])
        #expect(sut.handle(.publish(messages(2...2), now: .seconds(1))) == [.failed(.retryable("the MQTT uplink is shut down"))])
    }

    @Test func aLossReportedAfterTheMachineClosedTheConnectionIsIgnored() {
        var sut = makeSUT()
        _ = connected(&sut, publishing: 1...1)
        _ = sut.handle(.tick(now: .seconds(10)))  // closes: no PUBACK in time

        #expect(sut.handle(.transportLost(.retryable("closed"))).isEmpty)
    }
}
