import Foundation
import NIOPosix
import Testing
import TernCore
import TernTesting
@testable import TernUplink

/// `MQTTUplink` over TLS (`mqtts://`) to a real mosquitto with a certificate from a CA the test makes.
@Suite(
    .serialized, .timeLimit(.minutes(1)),
    .enabled(if: Mosquitto.isInstalled, "\(Mosquitto.missing)"),
    .enabled(if: TestCertificates.isInstalled, "openssl is not installed: apt-get install openssl"))
struct MQTTUplinkTLSTests {
    private func makeSUT(_ url: URL, caFile: String?) throws -> MQTTUplink {
        try MQTTUplink(
            url: url, device: "pi-gps-01", topic: nil, username: nil, password: nil, caFile: caFile, trackerID: nil,
            timeout: .seconds(2), group: MultiThreadedEventLoopGroup.singleton, logger: UplinkFixture.quiet)
    }

    /// A started broker serving TLS with the test CA's certificate.
    private func tlsBroker() async throws -> Mosquitto {
        let broker = try await Mosquitto(config: "allow_anonymous true\ncertfile DIR/server.pem\nkeyfile DIR/server.key")
        try await TestCertificates.make(in: broker.directory)
        try await broker.start()
        return broker
    }

    private func url(_ host: String, _ broker: Mosquitto) throws -> URL {
        try #require(URL(string: "mqtts://\(host):\(broker.port)"))
    }

    @Test(arguments: ["127.0.0.1", "localhost"])
    func theCustomCATrustsTheBrokerByAddressAndByName(host: String) async throws {
        let broker = try await tlsBroker()
        let sut = try makeSUT(try url(host, broker), caFile: broker.directory.appending(path: "ca.pem").path)

        let result = await sut.send(UplinkFixture.batch(1...20))

        #expect(result == .delivered, "\(broker.log.suffix(300))")
        await sut.shutdown()
        await broker.remove()
    }

    @Test func aBrokerSignedByAnUnknownCAIsPermanentAndNamesUplinkCAFile() async throws {
        let broker = try await tlsBroker()
        let sut = try makeSUT(try url("127.0.0.1", broker), caFile: nil)  // the system's CAs only

        let result = await sut.send(UplinkFixture.batch(1...3))

        guard case let .permanent(reason) = result else {
            Issue.record("expected a permanent failure, got \(result)")
            return
        }
        #expect(reason.contains("not trusted") && reason.contains("uplink.ca_file"))
        print("mqtts:// with an unknown CA: \(reason)")
        await sut.shutdown()
        await broker.remove()
    }

    @Test func tlsToAListenerWithoutTLSEndsInTheHandshakeAndSaysWhatToCheck() async throws {
        let broker = try await Mosquitto()
        try await TestCertificates.make(in: broker.directory)
        try await broker.start()
        let sut = try makeSUT(try url("127.0.0.1", broker), caFile: broker.directory.appending(path: "ca.pem").path)

        let result = await sut.send(UplinkFixture.batch(1...3))

        #expect(result.isRetryable, "\(result)")
        #expect(result.reason.contains("TLS handshake") && result.reason.contains("mqtts://"))
        await sut.shutdown()
        await broker.remove()
    }
}
