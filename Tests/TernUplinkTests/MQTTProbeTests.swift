import Foundation
import Testing
import TernCore
import TernTesting
@testable import TernUplink

/// `tern doctor`'s check of an MQTT broker (`MQTTProbe`) against a real mosquitto: a real TLS
/// handshake with the configured trust, never a CONNECT (which would end the tracker's session).
@Suite(
    .serialized, .timeLimit(.minutes(1)),
    .enabled(if: Mosquitto.isInstalled, "\(Mosquitto.missing)"),
    .enabled(if: TestCertificates.isInstalled, "openssl is not installed: apt-get install openssl"))
struct MQTTProbeTests {
    private func tlsBroker(names: String = "IP:127.0.0.1,DNS:localhost", days: Int = 2) async throws -> Mosquitto {
        let broker = try await Mosquitto(config: "allow_anonymous true\ncertfile DIR/server.pem\nkeyfile DIR/server.key")
        try await TestCertificates.make(in: broker.directory, names: names, days: days)
        try await broker.start()
        return broker
    }

    private func url(_ scheme: String, _ broker: Mosquitto) throws -> URL {
        try #require(URL(string: "\(scheme)://127.0.0.1:\(broker.port)"))
    }

    private func ca(_ broker: Mosquitto) -> String { broker.directory.appending(path: "ca.pem").path }

    @Test func aBrokerWhoseCertificateVerifiesWithTheConfiguredCAPasses() async throws {
        let broker = try await tlsBroker()

        let problem = await MQTTProbe.check(url: try url("mqtts", broker), caFile: ca(broker), timeout: .seconds(3))

        #expect(problem == nil)
        await broker.remove()
    }

    @Test func aCertificateFromACANotTrustedIsNamedWithUplinkCAFile() async throws {
        let broker = try await tlsBroker()

        let problem = await MQTTProbe.check(url: try url("mqtts", broker), caFile: nil, timeout: .seconds(3))

        #expect(problem?.contains("not trusted") == true && problem?.contains("uplink.ca_file") == true, "\(problem ?? "nil")")
        await broker.remove()
    }

    @Test func aCertificateForAnotherHostIsNamed() async throws {
        let broker = try await tlsBroker(names: "DNS:broker.example.com")

        let problem = await MQTTProbe.check(url: try url("mqtts", broker), caFile: ca(broker), timeout: .seconds(3))

        #expect(problem != nil)
        print("mqtts:// with a certificate for another host: \(problem ?? "nil")")
        await broker.remove()
    }

    @Test func anExpiredCertificateIsNamed() async throws {
        let broker = try await tlsBroker(days: -1)

        let problem = await MQTTProbe.check(url: try url("mqtts", broker), caFile: ca(broker), timeout: .seconds(3))

        #expect(problem?.contains("not trusted") == true, "\(problem ?? "nil")")
        await broker.remove()
    }

    @Test func mqttsToAListenerWithoutTLSSaysWhatToCheck() async throws {
        let broker = try await Mosquitto()
        try await TestCertificates.make(in: broker.directory)
        try await broker.start()

        let problem = await MQTTProbe.check(url: try url("mqtts", broker), caFile: ca(broker), timeout: .seconds(3))

        #expect(problem?.contains("TLS handshake") == true, "\(problem ?? "nil")")
        await broker.remove()
    }

    @Test func plainMQTTToARunningBrokerPasses() async throws {
        let broker = try await Mosquitto()
        try await broker.start()

        #expect(await MQTTProbe.check(url: try url("mqtt", broker), caFile: nil, timeout: .seconds(3)) == nil)
        await broker.remove()
    }

    @Test func nothingListeningIsNamed() async throws {
        let problem = await MQTTProbe.check(url: try #require(URL(string: "mqtt://127.0.0.1:1")), caFile: nil, timeout: .seconds(3))

        #expect(problem?.contains("cannot connect") == true, "\(problem ?? "nil")")
    }
}
