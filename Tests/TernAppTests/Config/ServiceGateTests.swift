import Foundation
import Testing
import TernApp

@Suite struct ServiceGateTests {
    private func verdict(_ toml: String?) throws -> ServiceGate.Verdict {
        let directory = NSTemporaryDirectory() + "tern-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/tern.toml"
        if let toml { try toml.write(toFile: path, atomically: true, encoding: .utf8) }
        return ServiceGate.verdict(path: path, exists: { FileManager.default.fileExists(atPath: $0) })
    }

    @Test func aPlaceholderServerKeepsTheServiceFromStarting() throws {
        let sut = try verdict("device = \"van-7\"\n[uplink]\nurl = \"https://tracker.example.com/api/positions\"\n")
        guard case let .unconfigured(reasons) = sut else { Issue.record("\(sut)"); return }
        #expect(reasons.count == 1 && reasons[0].hasPrefix("uplink.url points at tracker.example.com"), "\(reasons)")
    }

    @Test func aDeviceNameEveryBoardSharesKeepsTheServiceFromStarting() throws {
        let sut = try verdict("device = \"raspberrypi\"\n[uplink]\nurl = \"https://gps.fleet.test/positions\"\n")
        guard case let .unconfigured(reasons) = sut else { Issue.record("\(sut)"); return }
        #expect(reasons.contains { $0.hasPrefix("device is \"raspberrypi\"") }, "\(reasons)")
    }

    @Test func aMissingFileIsUnconfigured() throws {
        let sut = try verdict(nil)
        guard case let .unconfigured(reasons) = sut else { Issue.record("\(sut)"); return }
        #expect(reasons.first?.contains("does not exist") == true)
    }

    @Test func harmlessWarningsLetTheServiceStart() throws {
        let sut = try verdict("device = \"van-7\"\n[uplink]\nurl = \"https://gps.fleet.test/positions\"\n[metrics]\nlisten = \"0.0.0.0:9464\"\n")
        guard case let .start(warnings) = sut else { Issue.record("\(sut)"); return }
        #expect(warnings.contains { $0.hasPrefix("metrics.listen") }, "\(warnings)")
    }

    @Test func anInvalidFilePassesSoThatTernRunFailsTheUnitNamingTheKey() throws {
        let sut = try verdict("device = \"van-7\"\n[uplink]\nurl = \"https://gps.fleet.test/positions\"\nbatch_size = 0\n")
        guard case let .invalid(error) = sut else { Issue.record("\(sut)"); return }
        #expect(error.key == "uplink.batch_size")
    }

    @Test func theUnconfiguredMessageSaysWhatToEditAndHowToStart() {
        let sut = ServiceGate.lines(.unconfigured(["uplink.url points at tracker.example.com"]), path: "/etc/tern/tern.toml")
        #expect(sut.first == "not started: /etc/tern/tern.toml is not configured for this tracker yet")
        #expect(sut.last == "edit /etc/tern/tern.toml (tern config check /etc/tern/tern.toml), then: systemctl start tern")
    }

    @Test func everyShippedBoardProfileIsAPlaceholderUntilEdited() throws {
        // The profiles the package and flash-image.sh install name tracker.example.com on purpose.
        let board = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../board").standardized
        let profiles = try FileManager.default.contentsOfDirectory(atPath: board.path).filter { $0.hasSuffix(".toml") && $0 != "simulated.toml" }
        #expect(profiles.count >= 5)
        for profile in profiles {
            let sut = ServiceGate.verdict(path: board.appendingPathComponent(profile).path, exists: { FileManager.default.fileExists(atPath: $0) })
            guard case .unconfigured = sut else { Issue.record("\(profile): \(sut)"); continue }
        }
    }
}
