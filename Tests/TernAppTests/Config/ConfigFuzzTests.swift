import Foundation
import Testing
import TernApp
import TernTesting

/// Every number and duration a configuration reads, set to values that do not fit (huge, infinite,
/// not a number, negative): each is taken if in range or refused naming its key, never a crash (a
/// trap in `tern config check` or `tern run` would loop the unit for ever).
@Suite struct ConfigFuzzTests {
    static let base = ["uplink": [#"url = "https://tracker.example.com/positions""#]]
    static let hostile = [
        "1e30", "-1e30", "inf", "-inf", "nan", "9223372036854775807", "-9223372036854775808", "-1", "0", "1.5",
        #""1e20s""#, #""1e300d""#, #""-5s""#, #""infs""#, #""nan""#, #""9223372036854775807ms""#, #""""#,
    ]

    /// The keys that read a number or a duration, from the trace of a configuration that sets nothing.
    static func numericKeys() throws -> [String] {
        let trace = ConfigTrace()
        _ = try TernConfig.parse(render(base), trace: trace)
        return trace.entries.filter { entry in
            let value = entry.value
            if Double(value) != nil { return true }
            guard value.hasPrefix("\""), value.hasSuffix("\""), value.count > 2 else { return false }
            return DurationText.parse(String(value.dropFirst().dropLast())) != nil
        }.map(\.key)
    }

    static func render(_ sections: [String: [String]]) -> String {
        sections.sorted { $0.key < $1.key }.map { "[\($0.key)]\n" + $0.value.joined(separator: "\n") }.joined(separator: "\n")
    }

    @Test func theTraceFindsTheNumericKeys() throws {
        let keys = try Self.numericKeys()
        #expect(keys.count >= 20, "\(keys)")
        #expect(keys.contains("uplink.timeout"))
    }

    /// About a thousand parses: on a thread of their own, not on one of the tests' few cooperative
    /// threads, which the real-time tests beside it need.
    @Test func everyNumberAndDurationIsTakenOrRefusedNamingItsKey() async throws {
        let misfiled = try await TernExecutable.offload { try Self.misfiledRefusals() }
        #expect(misfiled.refused > 0)
        #expect(misfiled.wrongKey.isEmpty, "refused under another key: \(misfiled.wrongKey.prefix(10))")
    }

    /// Every hostile value for every numeric key: how many were refused, and the refusals that named
    /// another key than the one set.
    static func misfiledRefusals() throws -> (refused: Int, wrongKey: [String]) {
        var refused = 0
        var wrongKey: [String] = []
        for key in try Self.numericKeys() {
            let parts = key.split(separator: ".").map(String.init)
            let section = parts.dropLast().joined(separator: ".")
            for value in Self.hostile {
                var sections = Self.base
                sections[section, default: []].append("\(parts.last ?? key) = \(value)")
                do {
                    _ = try TernConfig.parse(Self.render(sections))
                } catch {
                    refused += 1
                    if error.key != key { wrongKey.append("\(key) = \(value) was refused under \(error.key): \(error.message)") }
                }
            }
        }
        return (refused, wrongKey)
    }
}
