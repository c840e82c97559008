import Foundation
import TernCore
import TernNMEA

/// One fuzz iteration over the NMEA pipeline: bytes → `NMEAFramer` → `NMEADecoder` → `NMEAFixAssembler`
/// → `GPSDFixRecord` (JSON), and the same bytes through `NMEALogDecoder` (the `tern nmea decode` path).
///
/// Every violated invariant is a `precondition` failure, so libFuzzer (and the replay tool) stop
/// there with a stack trace. The checks are the modules' documented promises, nothing stricter:
/// - framing must not depend on how the stream was split into reads (a second framer gets the same
///   bytes in chunks whose sizes come from the input's first bytes) — same sentences, same counters;
/// - a delivered sentence starts with `$`/`!`, is printable ASCII, shorter than the line limit and
///   ends in `*HH`; the framer counted it;
/// - decoding either succeeds or throws `NMEADecodingError` (whose description must render);
///   decoded coordinates are valid and decoded numbers finite;
/// - an emitted `Fix` has a valid coordinate, a finite time and finite numbers (it must be
///   storable and encodable as JSON); the assembler's counters agree with what it returned;
/// - its `GPSDFixRecord` line is one valid JSON object with the fix's `time`, `lat` and `lon`;
/// - `NMEALogDecoder` gives the same fixes whether fed at once or in chunks, and, for input without
///   `#` (its comment marker), the same fixes as the pipeline above.
enum NMEAHarness {
    /// Fixed, so that a run is reproducible: two-digit years resolve around 2025.
    static let referenceDate = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01T00:00:00Z
    static let decoder = NMEADecoder(context: NMEADecodingContext(reference: referenceDate))

    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        // A mutated sentence almost never keeps a valid checksum, so the framer would reject it
        // and the decoders never see it. For half of the inputs (chosen by the first bytes) the
        // harness first rewrites every `*HH` to the right checksum, so mutations reach the fields.
        if ChunkSchedule.seed(bytes) & 1 == 1 {
            var repaired = Array(bytes)
            repairChecksums(&repaired)
            repaired.withUnsafeBufferPointer { pipeline($0) }
        } else {
            pipeline(bytes)
        }
    }

    /// Overwrites the two characters after each sentence's `*` with the XOR of the bytes between
    /// its `$`/`!` and the `*` (as hex), like a receiver would have computed them.
    static func repairChecksums(_ bytes: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        var start: Int?
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "$"), UInt8(ascii: "!"):
                start = index
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                start = nil
            case UInt8(ascii: "*"):
                if let first = start, index + 2 < bytes.count {
                    var sum: UInt8 = 0
                    for byte in bytes[(first + 1)..<index] { sum ^= byte }
                    bytes[index + 1] = hex[Int(sum >> 4)]
                    bytes[index + 2] = hex[Int(sum & 0xF)]
                    index += 2
                }
                start = nil
            default:
                break
            }
            index += 1
        }
    }

    static func pipeline(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Framing, all at once.
        var whole = NMEAFramer()
        let sentences = whole.append(bytes)

        // Framing again, in chunks: partial reads must not change anything.
        var chunked = NMEAFramer()
        var again: [NMEASentence] = []
        var schedule = ChunkSchedule(seedingFrom: bytes)
        var offset = 0
        while offset < bytes.count {
            let size = min(schedule.next(), bytes.count - offset)
            again += chunked.append(UnsafeBufferPointer(rebasing: bytes[offset..<(offset + size)]))
            offset += size
        }
        precondition(again == sentences, "framing depends on read boundaries (\(schedule.mode))")
        precondition(chunked.stats == whole.stats, "framer counters depend on read boundaries")
        precondition(whole.stats.sentences == sentences.count, "framer delivered a sentence it did not count")

        var assembler = NMEAFixAssembler()
        var fixes: [Fix] = []
        for sentence in sentences {
            check(sentence, maxLineLength: whole.maxLineLength)
            let message: NMEAMessage
            do {
                message = try decoder.decode(sentence)
            } catch {
                precondition(!error.description.isEmpty)
                continue
            }
            check(message)
            for fix in assembler.add(message) {
                check(fix)
                fixes.append(fix)
            }
        }
        if let fix = assembler.flush() {
            check(fix)
            fixes.append(fix)
        }
        precondition(assembler.flush() == nil, "a second flush emitted a fix")
        precondition(
            assembler.stats.fixesEmitted == fixes.count,
            "assembler counted \(assembler.stats.fixesEmitted) fixes, returned \(fixes.count)")

        // The `tern nmea decode` path, at once and in the same chunks.
        let logFixes = logDecode(bytes, chunked: false)
        precondition(logDecode(bytes, chunked: true) == logFixes, "NMEALogDecoder depends on read boundaries")
        if !bytes.contains(UInt8(ascii: "#")) {
            precondition(logFixes == fixes, "NMEALogDecoder and the framer/decoder/assembler pipeline disagree")
        }
    }

    static func logDecode(_ bytes: UnsafeBufferPointer<UInt8>, chunked: Bool) -> [Fix] {
        var decoder = NMEALogDecoder(reference: .notBefore(referenceDate))
        var fixes: [Fix] = []
        let emit: (Fix) -> Void = { fix in
            check(fix)
            fixes.append(fix)
        }
        if chunked {
            var schedule = ChunkSchedule(seedingFrom: bytes)
            var offset = 0
            while offset < bytes.count {
                let size = min(schedule.next(), bytes.count - offset)
                decoder.append(UnsafeBufferPointer(rebasing: bytes[offset..<(offset + size)]), emit: emit)
                offset += size
            }
        } else {
            decoder.append(bytes, emit: emit)
        }
        decoder.finish(emit: emit)
        precondition(decoder.stats.bytes == bytes.count, "NMEALogDecoder lost count of its input")
        return fixes
    }

    static func check(_ sentence: NMEASentence, maxLineLength: Int) {
        let raw = Array(sentence.raw.utf8)
        precondition(raw.first == UInt8(ascii: "$") || raw.first == UInt8(ascii: "!"), "sentence without start delimiter")
        precondition(raw.count < maxLineLength, "sentence longer than the line limit")
        precondition(raw.allSatisfy { (0x20...0x7E).contains($0) }, "non-printable byte in a sentence")
        precondition(raw.count >= 4 && raw[raw.count - 3] == UInt8(ascii: "*"), "sentence without *HH")
        precondition(!sentence.type.isEmpty || sentence.isProprietary, "sentence without a type")
        for field in sentence.fields {
            precondition(!field.contains(","), "field contains a comma")
        }
    }

    static func check(_ message: NMEAMessage) {
        switch message {
        case let .gga(gga):
            precondition(gga.coordinate?.isValid ?? true, "GGA decoded an invalid coordinate")
            finite(gga.hdop, "GGA hdop")
            finite(gga.altitude, "GGA altitude")
            finite(gga.geoidSeparation, "GGA geoid separation")
        case let .rmc(rmc):
            precondition(rmc.coordinate?.isValid ?? true, "RMC decoded an invalid coordinate")
            finite(rmc.speed, "RMC speed")
            finite(rmc.course, "RMC course")
        default:
            break
        }
    }

    static func check(_ fix: Fix) {
        precondition(fix.coordinate.isValid, "fix with invalid coordinate \(fix.coordinate)")
        precondition(fix.time.timeIntervalSince1970.isFinite, "fix with non-finite time")
        finite(fix.altitude, "fix altitude")
        finite(fix.speed, "fix speed")
        finite(fix.course, "fix course")
        finite(fix.hdop, "fix hdop")
        finite(fix.accuracy, "fix accuracy")
        finite(fix.geoidSeparation, "fix geoid separation")
        finite(fix.pdop, "fix pdop")
        finite(fix.vdop, "fix vdop")
        checkRecord(fix)
    }

    /// The JSON line `tern nmea decode` prints for `fix` must parse, as one object with time, lat and lon.
    static func checkRecord(_ fix: Fix) {
        var line: [UInt8] = []
        GPSDFixRecord(fix).write(to: &line)
        precondition(line.last == UInt8(ascii: "\n") && line.firstIndex(of: UInt8(ascii: "\n")) == line.count - 1,
            "JSON record is not exactly one line")
        let object = try? JSONSerialization.jsonObject(with: Data(line))
        guard let record = object as? [String: Any] else {
            preconditionFailure("JSON record does not parse: \(String(decoding: line, as: UTF8.self))")
        }
        precondition(record["time"] is String, "JSON record without time")
        precondition(record["lat"] is NSNumber && record["lon"] is NSNumber, "JSON record without lat/lon")
    }

    static func finite(_ value: Double?, _ what: @autoclosure () -> String) {
        if let value {
            precondition(value.isFinite, "\(what()) is not finite: \(value)")
        }
    }
}

/// Read sizes for the chunked framer, from a small PRNG seeded by the first 8 input bytes
/// (bit 0 of the seed is the harness's checksum-repair switch; bits 61–62 pick the mode).
struct ChunkSchedule {
    enum Mode { case bytewise, tiny, lineSized, large }
    private(set) var mode: Mode
    private var state: UInt64

    static func seed(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for byte in bytes.prefix(8) {
            seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return seed
    }

    init(seedingFrom bytes: UnsafeBufferPointer<UInt8>) {
        let seed = Self.seed(bytes)
        state = seed
        mode = [Mode.bytewise, .tiny, .lineSized, .large][Int(seed >> 61) & 3]
    }

    /// splitmix64
    private mutating func random() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next() -> Int {
        switch mode {
        case .bytewise: 1
        case .tiny: 1 + Int(random() % 7)
        case .lineSized: 1 + Int(random() % 100)
        case .large: 1 + Int(random() % 1024)
        }
    }
}
