import Foundation

/// The benchmark input: the corpus logs concatenated, repeated to a minimum size, in a temp file.
struct Input {
    var path: String
    var bytes: Int
    /// Lines starting with `$` or `!` (what both tools try to decode).
    var sentences: Int
    var lines: Int
    /// Lines starting with `#` (gpsd regression-log comments; both tools skip them).
    var commentLines: Int
    var files: Int
    var repeats: Int

    static func make(corpus: String, minimumBytes: Int) throws -> Input {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: corpus))?.filter { $0.hasSuffix(".log") }.sorted() ?? []
        guard !names.isEmpty else {
            fail("no *.log files in \(corpus) (run from the package root, or pass --corpus DIR)", code: 2)
        }
        var block: [UInt8] = []
        for name in names {
            guard let data = FileManager.default.contents(atPath: corpus + "/" + name) else {
                fail("cannot read \(corpus)/\(name)", code: 2)
            }
            block += data
            if block.last != UInt8(ascii: "\n") { block.append(UInt8(ascii: "\n")) }
        }
        var sentences = 0, lines = 0, comments = 0
        var atLineStart = true
        for byte in block {
            if atLineStart {
                lines += 1
                if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") { sentences += 1 }
                if byte == UInt8(ascii: "#") { comments += 1 }
            }
            atLineStart = byte == UInt8(ascii: "\n")
        }
        let repeats = max(1, (minimumBytes + block.count - 1) / block.count)
        let path = NSTemporaryDirectory() + "tern-bench-nmea-\(getpid()).log"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { fail("cannot create \(path)", code: 1) }
        let data = Data(block)
        for _ in 0..<repeats { try handle.write(contentsOf: data) }
        try handle.close()
        return Input(
            path: path, bytes: block.count * repeats, sentences: sentences * repeats, lines: lines * repeats,
            commentLines: comments * repeats, files: names.count, repeats: repeats)
    }
}
