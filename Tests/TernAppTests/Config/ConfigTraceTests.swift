import Testing
import TernApp

/// `tern config show`: every key read, with its effective value and where it came from.
@Suite struct ConfigTraceTests {
    private func traced(_ toml: String) throws -> ConfigTrace {
        let sut = ConfigTrace()
        _ = try TernConfig.parse(toml, trace: sut)
        return sut
    }

    private func entry(_ key: String, in trace: ConfigTrace) -> ConfigTrace.Entry? {
        trace.entries.first { $0.key == key }
    }

    @Test func aKeyTheFileSetsIsShownAsWrittenAndFromTheFile() throws {
        let sut = try traced("[uplink]\nurl = \"https://tracker.example.org/p\"\n[filter]\nwarm_up = \"10s\"\n")
        #expect(entry("filter.warm_up", in: sut) == .init(key: "filter.warm_up", value: "\"10s\"", fromFile: true))
    }

    @Test func aKeyLeftOutIsShownWithTheDefaultInForce() throws {
        let sut = try traced("[uplink]\nurl = \"https://tracker.example.org/p\"\n")
        #expect(entry("filter.warm_up", in: sut) == .init(key: "filter.warm_up", value: "\"3s\"", fromFile: false))
        #expect(entry("store.commit_positions", in: sut) == .init(key: "store.commit_positions", value: "10", fromFile: false))
    }

    @Test func anOptionalKeyLeftOutIsShownUnset() throws {
        let sut = try traced("[uplink]\nurl = \"https://tracker.example.org/p\"\n")
        #expect(entry("store.max_age", in: sut)?.value == "(unset)")
    }

    @Test func everyKeyIsShownOnce() throws {
        let sut = try traced("[uplink]\nurl = \"https://tracker.example.org/p\"\n")
        let keys = sut.entries.map(\.key)
        #expect(Set(keys).count == keys.count, "repeated: \(keys.filter { k in keys.filter { $0 == k }.count > 1 })")
    }

    @Test func aTokenInTheFileIsNeverPrinted() throws {
        let sut = try traced("[uplink]\nurl = \"https://tracker.example.org/p\"\ntoken = \"s3cret-value\"\n")
        let text = sut.text()
        #expect(!text.contains("s3cret-value"))
        #expect(text.contains("uplink.token = (set)"))
    }

    @Test func eachLineSaysWhereTheValueCameFrom() throws {
        let lines = try traced("log_level = \"debug\"\n[uplink]\nurl = \"https://tracker.example.org/p\"\n").text()
            .split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("log_level = \"debug\"") && $0.hasSuffix("# file") })
        #expect(lines.contains { $0.hasPrefix("filter.max_speed_mps = 70") && $0.hasSuffix("# default") })
    }
}
