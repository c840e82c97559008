import Foundation
import Testing
import TernApp
import TernCore

/// `tern demo` runs the simulated board's profile as the daemon reads it, with the shipped rules.
@Suite struct SimulatedBoardProfileTests {
    private static let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theBuiltInCopyIsTheFileInTheRepository() throws {
        let file = try String(contentsOf: Self.repository.appending(path: SimulatedBoardProfile.path), encoding: .utf8)
        #expect(SimulatedBoardProfile.text + "\n" == file)
    }

    @Test func theDemoRunsTheProfileWithOnlyTheDataDirectorySpeedAndCollectorOverridden() throws {
        let sut = Demo(options: DemoOptions(speed: 40), logger: .init(label: "test"))
        let config = try sut.config(dataDirectory: "/tmp/demo")
        var expected = try TernConfig.load(path: Self.repository.appending(path: SimulatedBoardProfile.path).path)
        expected.dataDirectory = "/tmp/demo"
        expected.receiver = .simulated(speed: 40, seed: 1)
        expected.uplink.url = nil
        expected.uplink.localCollector = true
        #expect(config == expected)
    }

    @Test func theProfileRunsTheShippedSchedulerFilterAndCommitWindow() throws {
        let config = try TernConfig.parse(SimulatedBoardProfile.text)
        #expect(config.core == GatewayCore.Configuration.shipped)
    }

    @Test func aConfigurationForARealReceiverIsRefusedWithTheReason() throws {
        let directory = NSTemporaryDirectory() + "tern-demo-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/serial.toml"
        try "device = \"x\"\n[uplink]\nurl = \"https://example.org/\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let sut = Demo(options: DemoOptions(configPath: path), logger: .init(label: "test"))
        #expect { try sut.config(dataDirectory: "/tmp/demo") } throws: { error in
            (error as? ConfigError)?.message.contains("receiver.kind = \"simulated\"") == true
        }
    }
}
