import ArgumentParser
import Foundation
import TernCore
import TernHardware
import TernNMEA

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Tern.NMEA {
    /// `tern nmea decode [FILE] [--reference-date YYYY-MM-DD]`: NMEA in, one gpsd-style JSON fix per epoch out.
    struct NMEADecode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decode",
            abstract: "Decode an NMEA log (file or stdin) into one JSON fix per receiver epoch (gpsd's fix format).",
            discussion: """
                Streams with constant memory. Lines starting with '#' are comments; '# Date: YYYY-MM-DD' \
                sets the reference date (as in gpsd's regression logs). Counters go to stderr with --stats.
                """)

        @Argument(help: "NMEA log to read; stdin when omitted or '-'.")
        var file: String?

        @Option(help: "Date at or before the recording (YYYY-MM-DD), for two-digit years and GPS week rollover (default: the system clock, which no corrected date passes).")
        var referenceDate: String?

        @Flag(help: "Print framing/decoding counters to stderr at the end.")
        var stats = false

        static let chunkSize = 64 * 1024

        func run() throws {
            var decoder = NMEALogDecoder(reference: try reference())
            let input: Int32
            if let file, file != "-" {
                input = open(file, O_RDONLY)
                guard input >= 0 else { throw ValidationError("cannot open \(file): \(String(cString: strerror(errno)))") }
            } else {
                input = STDIN_FILENO
            }
            defer { if input != STDIN_FILENO { close(input) } }

            var output: [UInt8] = []
            output.reserveCapacity(Self.chunkSize * 2)
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Self.chunkSize)
            defer { buffer.deallocate() }
            while true {
                let count = read(input, buffer.baseAddress, Self.chunkSize)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ValidationError("read failed: \(String(cString: strerror(errno)))")
                }
                if count == 0 { break }
                decoder.append(UnsafeBufferPointer(rebasing: buffer[0..<count])) { GPSDFixRecord($0).write(to: &output) }
                if output.count >= Self.chunkSize {
                    try Self.write(output)
                    output.removeAll(keepingCapacity: true)
                }
            }
            decoder.finish { GPSDFixRecord($0).write(to: &output) }
            try Self.write(output)
            if stats { Self.report(decoder.stats) }
        }

        private func reference() throws -> NMEADateReference {
            guard let referenceDate else { return SystemClock.dateReference() }
            guard let date = NMEALogDecoder.headerDate(Array("Date: \(referenceDate)".utf8)) else {
                throw ValidationError("--reference-date must be YYYY-MM-DD, got '\(referenceDate)'")
            }
            return .notBefore(date)
        }

        private static func write(_ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(STDOUT_FILENO, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw ExitCode(1)
                    }
                    offset += written
                }
            }
        }

        private static func report(_ stats: NMEALogDecoderStats) {
            let lines = """
                bytes \(stats.bytes), comments \(stats.comments), sentences \(stats.framer.sentences), \
                checksum errors \(stats.framer.checksumErrors), missing checksums \(stats.framer.missingChecksum), \
                overlong \(stats.framer.overlong), garbage bytes \(stats.framer.garbageBytes), \
                decode errors \(stats.decodeErrors), epochs \(stats.assembler.epochs), \
                fixes \(stats.assembler.fixesEmitted), invalid epochs \(stats.assembler.invalidEpochs), \
                undated epochs \(stats.assembler.undatedEpochs)

                """
            FileHandle.standardError.write(Data(lines.utf8))
        }
    }
}
