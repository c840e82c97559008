import ArgumentParser
import Foundation
import TernCore
import TernTesting

#if canImport(Glibc)
import Glibc
#endif

/// The crash harness's child process (see `QueueChild` in TernTesting for what it prints).
///
/// Test-only, and kept out of `Sources/`: `enqueue` links a VFS that cuts the power on purpose.
/// It is a process of its own because a power cut or a SIGKILL ends the process it hits, and because
/// the crash VFS has to be SQLite's default VFS in the process that writes, and in no other.
@main
struct TernQueueChild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tern-queue-child",
        abstract: "Writes to a Tern queue until its power is cut or it is killed (the crash harness's child).",
        subcommands: [Enqueue.self, Forward.self, Drain.self])
}

/// Prints one line of the protocol with a single write(2), at once: a line a killed child printed
/// is never lost in a buffer, and lines from several tasks never interleave (PIPE_BUF).
func emit(_ line: QueueChild.Line) {
    let bytes = Array((line.description + "\n").utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return }
        written += count
    }
}

/// A plausible position, `index` seconds into the run.
func makePosition(_ index: Int) -> Position {
    let fix = Fix(
        time: Date(timeIntervalSince1970: 1_795_000_000 + Double(index)),
        coordinate: Coordinate(latitude: 45.81 + Double(index % 1000) / 100_000, longitude: 15.97),
        altitude: 120.5, speed: 1.25, course: 87, quality: .dgps, satellites: 9, hdop: 0.9, accuracy: 3.5)
    return Position(fix: fix)
}
