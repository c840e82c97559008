import Foundation
import Testing
import TernTesting

/// `tern queue`: read-only inspection of a queue (a copy of the schema-v2 fixture, 21 positions).
@Suite(.timeLimit(.minutes(5))) struct QueueCommandTests {
    static let binary = TernExecutable.url
    static let fixture = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "../../TernStoreTests/Fixtures/queue-schema-v2.sqlite").standardized

    /// A data directory holding a copy of the fixture.
    private func dataDirectory() async throws -> String {
        let path = NSTemporaryDirectory() + "tern-queue-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture.path, toPath: path + "/queue.sqlite")
        return path
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func exportReadsEveryPositionWithoutChangingTheFile() async throws {
        let dir = try await dataDirectory()
        let before = try Data(contentsOf: URL(filePath: dir + "/queue.sqlite"))
        let result = try await TernExecutable.run(["queue", "export", "--data-dir", dir, "--format", "geojson"])
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((json?["features"] as? [Any])?.count == 21)
        #expect(try Data(contentsOf: URL(filePath: dir + "/queue.sqlite")) == before)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func exportAsCSVHasAHeaderAndARowPerPosition() async throws {
        let result = try await TernExecutable.run(["queue", "export", "--data-dir", try await dataDirectory(), "--format", "csv"])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("seq,id,time,lat,lon") == true)
        #expect(lines.count == 22)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func statsNamesTheDepthAndTheLastSequence() async throws {
        let result = try await TernExecutable.run(["queue", "stats", "--data-dir", try await dataDirectory()])
        #expect(result.stdout.contains("waiting        21 positions"))
        #expect(result.stdout.contains("last sequence  21"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aMissingQueueIsAnErrorNamingThePath() async throws {
        let result = try await TernExecutable.run(["queue", "stats", "--data-dir", "/nonexistent"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("/nonexistent/queue.sqlite"))
    }
}
