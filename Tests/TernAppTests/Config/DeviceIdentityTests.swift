import Foundation
import Testing
import TernApp

@Suite struct DeviceIdentityTests {
    @Test func aHostNameOfItsOwnIsTheDeviceName() {
        #expect(DeviceIdentity.name(hostName: "van-7", machineID: "0123456789abcdef0123456789abcdef") == "van-7")
    }

    @Test func aStockHostNameGivesWayToTheMachineID() {
        #expect(DeviceIdentity.name(hostName: "raspberrypi", machineID: "0123456789abcdef0123456789abcdef\n") == "tern-0123456789ab")
    }

    @Test func theDomainIsLeftOut() {
        #expect(DeviceIdentity.name(hostName: "van-7.fleet.example.org", machineID: nil) == "van-7")
    }

    @Test func withoutAMachineIDAStockNameStaysRatherThanNothing() {
        #expect(DeviceIdentity.name(hostName: "raspberrypi", machineID: nil) == "raspberrypi")
    }
}

@Suite struct SecretsFileTests {
    private func files(config: String, secrets: String?) throws -> String {
        let directory = NSTemporaryDirectory() + "tern-secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try config.write(toFile: directory + "/tern.toml", atomically: true, encoding: .utf8)
        chmod(directory + "/tern.toml", 0o640)
        if let secrets {
            try secrets.write(toFile: directory + "/secrets.toml", atomically: true, encoding: .utf8)
            chmod(directory + "/secrets.toml", 0o640)
        }
        return directory
    }

    private let config = "device = \"van-7\"\n[uplink]\nurl = \"https://tracker.example.org/p\"\ntoken = \"from-config\"\n"

    @Test func theSecretsFileBesideTheConfigOverridesItsToken() throws {
        let directory = try files(config: config, secrets: "[uplink]\ntoken = \"s3cret\"\n")
        let sut = try TernConfig.load(path: directory + "/tern.toml")
        #expect(sut.uplink.token == "s3cret")
        #expect(sut.secretsWorldReadable == nil)
    }

    @Test func withoutASecretsFileTheConfigsTokenStays() throws {
        let directory = try files(config: config, secrets: nil)
        #expect(try TernConfig.load(path: directory + "/tern.toml").uplink.token == "from-config")
    }

    @Test func aSecretsFileTakesOnlyCredentials() throws {
        let directory = try files(config: config, secrets: "[uplink]\nurl = \"https://elsewhere.example.org/\"\n")
        do {
            _ = try TernConfig.load(path: directory + "/tern.toml")
            Issue.record("a url in secrets.toml was accepted")
        } catch {
            #expect(error.key == "uplink.url")
            #expect(error.message.contains("secrets.toml"), "\(error.message)")
        }
    }

    @Test func aSecretsFileEveryoneCanReadIsWarnedAbout() throws {
        let directory = try files(config: config, secrets: "[uplink]\ntoken = \"s3cret\"\n")
        chmod(directory + "/secrets.toml", 0o644)
        let sut = try TernConfig.load(path: directory + "/tern.toml")
        #expect(sut.warnings.contains { $0.contains("secrets.toml holds a secret and is readable by every user") })
    }

    @Test func aConfigHoldingATokenThatEveryoneCanReadIsWarnedAbout() throws {
        let directory = try files(config: config, secrets: nil)
        chmod(directory + "/tern.toml", 0o644)
        let sut = try TernConfig.load(path: directory + "/tern.toml")
        #expect(sut.warnings.contains { $0.contains("tern.toml holds a secret and is readable by every user") }, "\(sut.warnings)")
    }

    @Test func aConfigWithoutSecretsMayBeReadByEveryone() throws {
        let directory = try files(config: "device = \"van-7\"\n[uplink]\nurl = \"https://tracker.example.org/p\"\n", secrets: nil)
        chmod(directory + "/tern.toml", 0o644)
        #expect(try TernConfig.load(path: directory + "/tern.toml").secretsWorldReadable == nil)
    }

    @Test(arguments: [
        ("http://tracker.example.org/p", "token = \"t\"", "uplink.token would be sent unencrypted over http://"),
        ("mqtt://broker.example.org", "username = \"u\"\npassword = \"p\"\nprotocol = \"mqtt\"", "uplink.password would be sent unencrypted over mqtt://"),
    ])
    func credentialsOverAnUnencryptedURLAreWarnedAbout(_ url: String, _ lines: String, _ warning: String) throws {
        let sut = try TernConfig.parse("device = \"van-7\"\n[uplink]\nurl = \"\(url)\"\n\(lines)\n")
        #expect(sut.warnings.contains { $0.hasPrefix(warning) }, "\(sut.warnings)")
    }

    @Test func credentialsOverHTTPSAreNotWarnedAbout() throws {
        let sut = try TernConfig.parse("device = \"van-7\"\n[uplink]\nurl = \"https://tracker.example.org/p\"\ntoken = \"t\"\n")
        #expect(!sut.warnings.contains { $0.contains("unencrypted") })
    }

    @Test func systemdCredentialsComeFirst() throws {
        let directory = try files(config: config, secrets: nil)
        let credentials = try files(config: "", secrets: "[uplink]\ntoken = \"from-credential\"\n")
        let path = TernConfig.secretsPath(forConfig: directory + "/tern.toml", environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(path == credentials + "/secrets.toml")
        #expect(try TernConfig.load(path: directory + "/tern.toml", secrets: path).uplink.token == "from-credential")
    }
}
