// tern-fuzz-nmea: the NMEA fuzz harness (Harness.swift), as a libFuzzer target or a replay tool.
//
// Built normally (`swift build`), it replays inputs: `tern-fuzz-nmea FILE|DIR...` runs every file
// (directories: their files, not recursive) once through the harness and exits 0, or dies on the
// first violated invariant with the file name on stderr. Use it on `Tests/Fuzz/crashes/`.
//
// Built with `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address` (Tests/Fuzz/run.sh), it exports
// `LLVMFuzzerTestOneInput` and hands the command line to libFuzzer's own driver
// (`LLVMFuzzerRunDriver`, the documented entry for programs that have their own `main`, which a
// SwiftPM `main.swift` always has), so every libFuzzer flag works as usual.

import Foundation

#if FUZZING

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    NMEAHarness.run(UnsafeBufferPointer(start: size > 0 ? data : nil, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) }
exit(status)

#else

func inputs(from arguments: [String]) -> [String] {
    var files: [String] = []
    let manager = FileManager.default
    for argument in arguments {
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: argument, isDirectory: &isDirectory) else {
            FileHandle.standardError.write(Data("tern-fuzz-nmea: no such file or directory: \(argument)\n".utf8))
            exit(2)
        }
        if isDirectory.boolValue {
            let names = (try? manager.contentsOfDirectory(atPath: argument)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let path = (argument as NSString).appendingPathComponent(name)
                var nested: ObjCBool = false
                if manager.fileExists(atPath: path, isDirectory: &nested), !nested.boolValue {
                    files.append(path)
                }
            }
        } else {
            files.append(argument)
        }
    }
    return files
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("-h") || arguments.contains("--help") {
    print("""
        usage: tern-fuzz-nmea FILE|DIR...
        Runs each input once through the NMEA fuzz harness (framing, decoding, fix assembly,
        invariant checks). Exits 0 when all pass; a violated invariant stops it with a trap.
        Fuzzing itself: Tests/Fuzz/run.sh (see Tests/Fuzz/README.md).
        """)
    exit(arguments.isEmpty ? 2 : 0)
}

var count = 0
var totalBytes = 0
for path in inputs(from: arguments) {
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("tern-fuzz-nmea: cannot read \(path)\n".utf8))
        exit(2)
    }
    // Name the input before running it, so a trap can be attributed.
    FileHandle.standardError.write(Data("replaying \(path) (\(data.count) bytes)\n".utf8))
    data.withUnsafeBytes { raw in
        NMEAHarness.run(raw.bindMemory(to: UInt8.self))
    }
    count += 1
    totalBytes += data.count
}
print("tern-fuzz-nmea: \(count) input(s), \(totalBytes) bytes, all invariants held")

#endif
