import Foundation
import Testing
import TernMetrics

@Suite struct ReplacedFileTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "tern-replaced-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func replacesTheFileWholeAndLeavesNoTemporaryFileBehind() throws {
        let directory = try directory()
        let path = directory + "/status.json"
        try ReplacedFile.write(Array("old".utf8), to: path)

        try ReplacedFile.write(Array("new".utf8), to: path)

        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["status.json"])
    }

    @Test func aMissingDirectoryNamesThePathAndTheReason() throws {
        let path = try directory() + "/absent/status.json"

        #expect(throws: ReplacedFile.Failure(path: path, reason: String(cString: strerror(ENOENT)))) {
            try ReplacedFile.write(Array("{}".utf8), to: path)
        }
    }
}
