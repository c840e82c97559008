import Foundation
import NIOPosix
import Testing
import TernCore
import TernTesting
@testable import TernUplink

/// `MQTTUplink` against a real mosquitto, each test with a broker of its own on a free port.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: Mosquitto.isInstalled, "\(Mosquitto.missing)"))
struct MQTTUplinkBrokerTests {
    static let topic = "owntracks/alice/pi-gps-01"

    private func makeSUT(
        _ url: URL, username: String? = nil, password: String? = nil, caFile: String? = nil,
        tuning: MQTTUplink.Tuning = .init(keepAlive: .seconds(10), window: 16)
    ) throws -> MQTTUplink {
        try MQTTUplink(
            url: url, device: "pi-gps-01", topic: Self.topic, username: username, password: password, caFile: caFile,
            trackerID: nil, timeout: .seconds(2), group: MultiThreadedEventLoopGroup.singleton,
            logger: UplinkFixture.quiet, tuning: tuning)
    }

    /// Sends the positions in batches as the forwarder would (dropping what the broker acknowledged,
    /// retrying the rest after `pause`) until all are delivered or `limit` passes; returns every outcome.
    private func forward(
        _ positions: [QueuedPosition], with sut: MQTTUplink, batchSize: Int = 500, pause: Duration = .milliseconds(100),
        within limit: Duration = .seconds(15)
    ) async throws -> (outcomes: [UplinkResult], left: [QueuedPosition]) {
        var left = positions[...]
        var outcomes: [UplinkResult] = []
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while !left.isEmpty, clock.now < deadline {
            let batch = Array(left.prefix(batchSize))
            let outcome = await sut.send(batch)
            outcomes.append(outcome)
            switch outcome {
            case .delivered:
                left = left.dropFirst(batch.count)
            case let .partial(through, _):
                left = left.drop { $0.sequence <= through }
                try await Task.sleep(for: pause)
            default:
                try await Task.sleep(for: pause)
            }
        }
        return (outcomes, Array(left))
    }

    @Test func aBatchOf10kPositionsReachesASubscriberEveryOneOnce() async throws {
        let broker = try await Mosquitto()
        try await broker.start()
        let subscriber = try await Subscriber(broker: broker, topic: "owntracks/#")
        let sut = try makeSUT(broker.url)
        let positions = UplinkFixture.batch(1...10_000)

        let clock = ContinuousClock()
        let start = clock.now
        let result = await sut.send(positions)
        let elapsed = clock.now - start

        #expect(result == .delivered)
        #expect(try await subscriber.waitForDistinct(positions.count))
        let received = subscriber.ternIDs
        #expect(received == positions.map(\.position.id.uuidString))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("MQTT publish to a local mosquitto: \(positions.count) positions acknowledged in \(elapsed) "
            + "(\(Int(Double(positions.count) / seconds)) positions/s, window 16, QoS 1, this build)")
        let first = try JSONSerialization.jsonObject(with: Data((subscriber.messages.first ?? "").utf8)) as? [String: Any]
        #expect(first?["_type"] as? String == "location")
        #expect(first?["tid"] as? String == "01")
        await subscriber.stop()
        await sut.shutdown()
        await broker.remove()
    }

    @Test func aWrongPasswordIsPermanentNamesTheKeysAndTheRightOneDelivers() async throws {
        let broker = try await Mosquitto(config: "allow_anonymous false\npassword_file DIR/passwd")
        let passwordFile = broker.directory.appending(path: "passwd").path
        let status = try await DaemonProcess("/usr/bin/mosquitto_passwd", ["-b", "-c", passwordFile, "alice", "right"]).waitForExit()
        try #require(status == 0)
        try await broker.start()
        let wrong = try makeSUT(broker.url, username: "alice", password: "wrong")
        let right = try makeSUT(broker.url, username: "alice", password: "right")
        let positions = UplinkFixture.batch(1...5)

        let refused = await wrong.send(positions)
        let accepted = await right.send(positions)

        guard case let .permanent(reason) = refused else {
            Issue.record("expected a permanent failure, got \(refused)")
            return
        }
        #expect(reason.contains("uplink.username") && reason.contains("uplink.password"))
        #expect(accepted == .delivered)
        await wrong.shutdown()
        await right.shutdown()
        await broker.remove()
    }

    @Test func aBrokerRestartMidStreamLosesNothingAndRepeatsAreCounted() async throws {
        let broker = try await Mosquitto()
        try await broker.start()
        let subscriber = try await Subscriber(broker: broker, topic: "owntracks/#")
        let sut = try makeSUT(broker.url, tuning: .init(keepAlive: .seconds(10), window: 16, connectTimeout: .seconds(1)))
        let positions = UplinkFixture.batch(1...3000)
        let restart = Task {
            _ = try await subscriber.waitForDistinct(300, within: .seconds(10))
            try await broker.stop()
            try await Task.sleep(for: .milliseconds(300))
            try await broker.start()
        }

        let (outcomes, left) = try await forward(positions, with: sut)
        try await value(of: restart)

        #expect(left.isEmpty)
        #expect(outcomes.contains { $0 != .delivered }, "the restart went unnoticed: \(outcomes)")
        #expect(try await subscriber.waitForDistinct(positions.count))
        let received = subscriber.ternIDs
        #expect(Set(received) == Set(positions.map(\.position.id.uuidString)))
        let statistics = await sut.statistics()
        #expect(statistics.connections >= 2)
        print("MQTT broker restart: \(positions.count) positions, \(received.count - Set(received).count) delivered twice, "
            + "\(statistics.retransmissions) retransmitted with DUP, \(statistics.connections) connections, "
            + "\(outcomes.count) send calls")
        await subscriber.stop()
        await sut.shutdown()
        await broker.remove()
    }

    @Test func aBrokerThatStopsAnsweringEndsTheBatchAtTheResponseTimeoutAndItsMessagesFollowLater() async throws {
        let broker = try await Mosquitto()
        try await broker.start()
        let sut = try makeSUT(
            broker.url, tuning: .init(keepAlive: .seconds(10), window: 4, connectTimeout: .seconds(1), responseTimeout: .milliseconds(500)))
        #expect(await sut.send(UplinkFixture.batch(1...1)) == .delivered)

        broker.pause()
        let clock = ContinuousClock()
        let start = clock.now
        let stalled = await sut.send(UplinkFixture.batch(2...9))
        let waited = clock.now - start
        broker.resume()
        let later = await sut.send(UplinkFixture.batch(2...9))

        #expect(stalled.isRetryable, "\(stalled)")
        #expect(stalled.reason.contains("acknowledged none"))
        #expect(waited < .seconds(2))
        #expect(later == .delivered)
        #expect(await sut.statistics().retransmissions == 4)
        await sut.shutdown()
        await broker.remove()
    }

    @Test func aConnectionLostWithoutDisconnectLeavesTheOwnTracksWillAndAShutdownDoesNot() async throws {
        let broker = try await Mosquitto()
        try await broker.start()
        let subscriber = try await Subscriber(broker: broker, topic: "owntracks/#")
        let sut = try makeSUT(
            broker.url, tuning: .init(keepAlive: .seconds(10), window: 4, responseTimeout: .milliseconds(300)))
        let isWill: @Sendable (String) -> Bool = { $0.hasPrefix(#"{"_type":"lwt","tst":"#) }
        #expect(await sut.send(UplinkFixture.batch(1...1)) == .delivered)

        broker.pause()
        _ = await sut.send(UplinkFixture.batch(2...2))  // no PUBACK: the uplink closes the connection
        broker.resume()

        #expect(await eventually { subscriber.messages.contains(where: isWill) })
        #expect(await sut.send(UplinkFixture.batch(2...2)) == .delivered)
        await sut.shutdown()
        #expect(try await subscriber.waitForDistinct(2))
        try await Task.sleep(for: .milliseconds(100))  // time for a will the shutdown would have caused
        #expect(subscriber.messages.filter(isWill).count == 1)
        await subscriber.stop()
        await broker.remove()
    }

    @Test func anIdleConnectionIsKeptOpenByPings() async throws {
        let broker = try await Mosquitto(config: "allow_anonymous true\nlog_type all")
        try await broker.start()
        let sut = try makeSUT(broker.url, tuning: .init(keepAlive: .seconds(1), window: 16))
        #expect(await sut.send(UplinkFixture.batch(1...1)) == .delivered)

        try await Task.sleep(for: .milliseconds(1500))
        #expect(await sut.send(UplinkFixture.batch(2...2)) == .delivered)

        #expect(broker.log.contains("Received PINGREQ from tern-pi-gps-01"))
        #expect(await sut.statistics().connections == 1)
        await sut.shutdown()
        await broker.remove()
    }

    @Test func noBrokerListeningIsRetryableAndNamesTheBroker() async throws {
        let broker = try await Mosquitto()  // configured, never started: nothing listens on its port
        let sut = try makeSUT(broker.url)

        let result = await sut.send(UplinkFixture.batch(1...3))

        #expect(result.isRetryable, "\(result)")
        #expect(result.reason.contains("127.0.0.1:\(broker.port)"))
        await sut.shutdown()
        await broker.remove()
    }
}
