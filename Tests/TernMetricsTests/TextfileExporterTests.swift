import Foundation
import Testing
import TernMetrics

@Suite struct TextfileExporterTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "tern-textfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func writesTernPromReadableByOtherUsers() throws {
        let sut = TextfileExporter(directory: try directory())
        try sut.write("tern_queue_depth 3\n")
        #expect(try String(contentsOfFile: sut.path, encoding: .utf8) == "tern_queue_depth 3\n")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: sut.path)[.posixPermissions] as? Int)
        #expect(mode == 0o644)
    }

    @Test func replacesTheFileAndLeavesNoTemporaryFileBehind() throws {
        let sut = TextfileExporter(directory: try directory())
        try sut.write("tern_queue_depth 3\n")
        try sut.write("tern_queue_depth 4\n")
        #expect(try String(contentsOfFile: sut.path, encoding: .utf8) == "tern_queue_depth 4\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sut.directory) == ["tern.prom"])
    }

    @Test func aMissingDirectoryNamesTheKeyAndTheFix() throws {
        let sut = TextfileExporter(directory: try directory() + "/absent")
        #expect(throws: MetricsExportError.noDirectory(sut.directory)) { try sut.write("x 1\n") }
        #expect(MetricsExportError.noDirectory(sut.directory).description.contains("metrics.textfile_dir"))
        #expect(MetricsExportError.noDirectory(sut.directory).description.contains("prometheus-node-exporter"))
    }
}
