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
        subcommands: [Enqueue.self, Forward.self, Drain.self, Recover.self])
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

/// A plausible position, `index` seconds into the run, its id drawn from `random`: the same seed
/// gives the same ids, so the same B-tree pages split and a cut at the n-th write lands in the same
/// place again.
func makePosition(_ index: Int, using random: inout SplitMix64) -> Position {
    var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
    bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
    bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
    let id = UUID(uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    let fix = Fix(
        time: Date(timeIntervalSince1970: 1_795_000_000 + Double(index)),
        coordinate: Coordinate(latitude: 45.81 + Double(index % 1000) / 100_000, longitude: 15.97),
        altitude: 120.5, speed: 1.25, course: 87, quality: .dgps, satellites: 9, hdop: 0.9, accuracy: 3.5)
    return Position(id: id, fix: fix)
}
