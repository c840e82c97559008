import TernNMEA

struct NotASentence: Error {
    var line: String
}

/// Parses one line through the real framer; throws when it is not a valid sentence.
func sentence(_ line: String) throws -> NMEASentence {
    var framer = NMEAFramer()
    guard let sentence = framer.append(Array((line + "\r\n").utf8)).first else { throw NotASentence(line: line) }
    return sentence
}

/// An independent NMEA checksum (XOR of the characters between `$` and `*`), to cross-check vectors.
func referenceNMEAChecksum(_ body: String) -> String {
    var value = 0
    for scalar in body.unicodeScalars { value ^= Int(scalar.value) }
    let digits = Array("0123456789ABCDEF")
    return String([digits[value / 16], digits[value % 16]])
}

/// An independent UBX Fletcher-8 (UBX-13003221 §32.4, written as in the datasheet with explicit `mod 256`).
func referenceFletcher(_ bytes: [UInt8]) -> [UInt8] {
    var a = 0
    var b = 0
    for byte in bytes {
        a = (a + Int(byte)) % 256
        b = (b + a) % 256
    }
    return [UInt8(a), UInt8(b)]
}

/// `"B5 62 0A 04"` → bytes (test literal helper).
func bytes(_ hex: String) -> [UInt8] {
    hex.split(separator: " ").compactMap { UInt8($0, radix: 16) }
}
