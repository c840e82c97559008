import Foundation
import Glibc
import Testing
import TernTesting

/// `tern receiver` end to end: the real binary opens a PTY whose other side is a scripted fake receiver.
/// Replies are field lines from the gpsd regression suite (BSD-2-Clause) or carry independently computed checksums.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ReceiverCommandPTYTests {
    static let binary = TernExecutable.url

    static let firmware = Array("$PMTK705,AXN_2.51_3339_19071200,0002,QUECTEL-L70,1.0*32\r\n".utf8)

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Answers each occurrence of a trigger (bytes the binary writes) with its reply.
    final class FakeReceiver: Sendable {
        let pty: PTYPair
        let script: [(trigger: [UInt8], reply: [UInt8])]

        init(pty: PTYPair, script: [(trigger: [UInt8], reply: [UInt8])]) {
            self.pty = pty
            self.script = script
        }

        func serve() async {
            var received: [UInt8] = []
            var answered = [Int](repeating: 0, count: script.count)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !Task.isCancelled {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(pty.master, $0.baseAddress, $0.count) }
                guard n > 0 else {
                    try? await Task.sleep(for: .milliseconds(2))
                    continue
                }
                received += buffer[..<n]
                for (index, step) in script.enumerated() {
                    let count = occurrences(of: step.trigger, in: received)
                    while answered[index] < count {
                        answered[index] += 1
                        _ = step.reply.withUnsafeBytes { Glibc.write(pty.master, $0.baseAddress, $0.count) }
                    }
                }
            }
        }

        private func occurrences(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
            guard bytes.count >= pattern.count else { return 0 }
            return (0...(bytes.count - pattern.count)).filter {
                bytes[$0..<($0 + pattern.count)].elementsEqual(pattern)
            }.count
        }
    }

    private func run(_ arguments: (String) -> [String], script: [(trigger: [UInt8], reply: [UInt8])]) async throws
        -> Outcome
    {
        let pty = try PTYPair()
        let fake = FakeReceiver(pty: pty, script: script)
        let serving = Task { await fake.serve() }
        defer { serving.cancel() }
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments(pty.slavePath)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        while process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        return Outcome(
            status: process.terminationStatus,
            stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// The reply timeout is generous where a reply comes (the scripted receiver is a task of this test
    /// process, which a full parallel run on 2 cores can starve for seconds); it costs nothing then.
    private static func send(_ words: [String], chipset: String = "mediatek", timeout: String = "15s") -> (String) ->
        [String]
    {
        { ["receiver", "send", "--force", "--device", $0, "--baud", "9600", "--chipset", chipset, "--timeout", timeout] + words }
    }

    /// An independent UBX encoder for replies (UBX-13003221 §32.4 Fletcher-8).
    static func ubx(_ messageClass: UInt8, _ id: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let body = [messageClass, id, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
        var a = 0
        var b = 0
        for byte in body {
            a = (a + Int(byte)) % 256
            b = (b + a) % 256
        }
        return [0xB5, 0x62] + body + [UInt8(a), UInt8(b)]
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func versionPrintsTheFirmwareFromPMTK705() async throws {
        let result = try await run(Self.send(["version"]), script: [(Array("$PMTK605*31\r\n".utf8), Self.firmware)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("AXN_2.51_3339_19071200"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func standbyIsAcknowledgedByPMTK001() async throws {
        let result = try await run(
            Self.send(["standby"]), script: [(Array("$PMTK161,0*28\r\n".utf8), Array("$PMTK001,161,3*36\r\n".utf8))])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("accepted"))
    }

    // gpsd regression suite (BSD-2-Clause), nl402u.log: PMTK424 is unsupported there.
    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func anUnsupportedReplyExitsOneAndSaysWhy() async throws {
        let result = try await run(
            Self.send(["raw", "PMTK424"]), script: [(Array("$PMTK424*".utf8), Array("$PMTK001,424,1*30\r\n".utf8))])
        #expect(result.status == 1)
        #expect(result.stderr.contains("unsupported"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func silenceTimesOutWithExitTwoAndSaysWhatToCheck() async throws {
        let result = try await run(Self.send(["rate", "200"], timeout: "300ms"), script: [])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--baud 9600"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aUBXNakExitsOne() async throws {
        let nak = Self.ubx(0x05, 0x00, [0x06, 0x08])
        let result = try await run(
            Self.send(["rate", "200"], chipset: "ublox"), script: [([0xB5, 0x62, 0x06, 0x08], nak)])
        #expect(result.status == 1)
        #expect(result.stderr.contains("ACK-NAK"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func autoDetectsUBloxFromMonVerThenSends() async throws {
        let text = { (s: String, n: Int) in Array(s.utf8) + [UInt8](repeating: 0, count: n - s.utf8.count) }
        let monVer = Self.ubx(
            0x0A, 0x04, text("ROM CORE 3.01 (107888)", 30) + text("00080000", 10) + text("PROTVER=18.00", 30))
        let result = try await run(
            Self.send(["version"], chipset: "auto"), script: [([0xB5, 0x62, 0x0A, 0x04, 0x00, 0x00], monVer)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("chipset: u-blox"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func detectNamesTheMediaTekChipset() async throws {
        let result = try await run(
            { ["receiver", "detect", "--force", "--device", $0, "--baud", "9600", "--listen", "3s"] },
            script: [(Array("$PMTK605*31\r\n".utf8), Self.firmware)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Quectel L76X"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func detectOnASilentLineExitsOneWithHints() async throws {
        let result = try await run(
            { ["receiver", "detect", "--force", "--device", $0, "--baud", "9600", "--listen", "300ms"] }, script: [])
        #expect(result.status == 1)
        #expect(result.stderr.contains("nothing heard"))
    }
}
