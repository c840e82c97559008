import Foundation
import Testing
@testable import TernUplink

@Suite struct MQTTSettingsTests {
    private func endpoint(_ text: String) throws -> MQTTEndpoint {
        try MQTTEndpoint(url: try #require(URL(string: text)))
    }

    @Test func mqttAndMqttsURLsGiveHostPortAndTLSWithTheStandardPorts() throws {
        let plain = try endpoint("mqtt://broker.example")
        let tls = try endpoint("mqtts://broker.example")
        let custom = try endpoint("mqtt://10.0.0.2:11883/")

        #expect((plain.host, plain.port, plain.usesTLS) == ("broker.example", 1883, false))
        #expect((tls.host, tls.port, tls.usesTLS) == ("broker.example", 8883, true))
        #expect((custom.host, custom.port, custom.usesTLS) == ("10.0.0.2", 11883, false))
        #expect(try endpoint("mqtts://[::1]:8884").host == "::1")
        #expect(plain.description == "broker broker.example:1883")
    }

    @Test(arguments: ["http://broker:1883", "mqtt://", "mqtt://broker/owntracks/alice", "mqtt://broker?x=1"])
    func otherURLsAreConfigErrorsNamingUplinkURL(text: String) throws {
        let url = try #require(URL(string: text))

        let error = #expect(throws: UplinkConfigError.self) { try MQTTEndpoint(url: url) }

        #expect(error?.key == "uplink.url")
    }

    @Test func theSNINameIsTheHostUnlessItIsAnAddress() throws {
        #expect(try endpoint("mqtts://broker.example").serverHostname == "broker.example")
        #expect(try endpoint("mqtts://127.0.0.1").serverHostname == nil)
        #expect(try endpoint("mqtts://[::1]").serverHostname == nil)
    }

    @Test func theTopicDefaultsToOwnTracksUserAndDevice() throws {
        #expect(try MQTTSettings.topic(configured: nil, username: "alice", device: "pi") == "owntracks/alice/pi")
        #expect(try MQTTSettings.topic(configured: "", username: nil, device: "pi") == "owntracks/tern/pi")
        #expect(try MQTTSettings.topic(configured: "fleet/7", username: "alice", device: "pi") == "fleet/7")
    }

    @Test(arguments: ["owntracks/+/pi", "owntracks/#"])
    func aTopicWithAWildcardIsAConfigError(topic: String) {
        let error = #expect(throws: UplinkConfigError.self) {
            try MQTTSettings.topic(configured: topic, username: nil, device: "pi")
        }
        #expect(error?.key == "uplink.topic")
    }

    @Test func aPasswordWithoutAUsernameIsAConfigErrorNamingUplinkUsername() {
        let error = #expect(throws: UplinkConfigError.self) { try MQTTSettings.credentials(username: nil, password: "pw") }

        #expect(error?.key == "uplink.username")
    }

    @Test func aCAFileWithoutTLSIsAConfigError() throws {
        let error = #expect(throws: UplinkConfigError.self) {
            try MQTTSettings.tlsContext(endpoint: try endpoint("mqtt://broker"), caFile: "/etc/ssl/ca.pem")
        }

        #expect(error?.key == "uplink.ca_file")
        #expect(error?.description.contains("mqtts://") == true)
    }

    @Test func aMissingCAFileIsAConfigErrorNamingThePath() throws {
        let error = #expect(throws: UplinkConfigError.self) {
            try MQTTSettings.tlsContext(endpoint: try endpoint("mqtts://broker"), caFile: "/nonexistent/ca.pem")
        }

        #expect(error?.key == "uplink.ca_file")
        #expect(error?.description.contains("/nonexistent/ca.pem") == true)
    }

    @Test func aCAFileWithoutACertificateIsAConfigError() throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "tern-not-a-ca-\(UUID().uuidString).pem")
        try Data("hello\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let error = #expect(throws: UplinkConfigError.self) {
            try MQTTSettings.tlsContext(endpoint: try endpoint("mqtts://broker"), caFile: file.path)
        }

        #expect(error?.key == "uplink.ca_file")
    }

    @Test func theSystemsCAsNeedNoFile() throws {
        #expect(try MQTTSettings.tlsContext(endpoint: try endpoint("mqtts://broker"), caFile: nil) != nil)
        #expect(try MQTTSettings.tlsContext(endpoint: try endpoint("mqtt://broker"), caFile: nil) == nil)
    }
}
