import Foundation
import TernCore

/// Fixture builders for the store tests.
enum StoreFixture {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    /// A fully populated position `second` seconds after `start`.
    static func position(second: Int = 0, id: UUID = UUID()) -> Position {
        let fix = Fix(
            time: start.addingTimeInterval(Double(second)),
            coordinate: Coordinate(latitude: 45.81 + Double(second) / 10_000, longitude: 15.97),
            altitude: 120.5, speed: 1.25, course: 87, quality: .dgps, satellites: 9, hdop: 0.9, accuracy: 3.5)
        return Position(id: id, fix: fix)
    }

    static func positions(_ count: Int) -> [Position] {
        (0..<count).map { position(second: $0) }
    }
}

/// A fresh directory under the system temp dir, removed when `body` returns.
func withTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("tern-store-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await body(directory)
}

/// The queue file path inside `directory`.
func queuePath(in directory: URL) -> String {
    directory.appendingPathComponent("queue.sqlite").path
}
