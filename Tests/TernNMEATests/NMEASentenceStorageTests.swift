import Testing

@testable import TernNMEA

/// Parsed sentences keep delimiter offsets instead of a field array; these pin that both storages
/// behave like the field list they stand for.
struct NMEASentenceStorageTests {
    /// A checksum-valid line with `count` data fields `f0`, `f1`, ... (some empty).
    static func line(fields count: Int) -> String {
        let fields = (0..<count).map { $0 % 3 == 2 ? "" : "f\($0)" }
        let body = (["GPXYZ"] + fields).joined(separator: ",")
        return "$\(body)*\(NMEAChecksum.hex(NMEAChecksum.compute(Array(body.utf8))))"
    }

    @Test(arguments: [0, 1, 2, 7, 8, 15, 16, 30, 31, 32, 40])
    func fieldsMatchASplitOfTheLine(count: Int) throws {
        let raw = Self.line(fields: count)
        let sentence = try #require(NMEASentence.parse(raw: raw))
        let star = try #require(raw.lastIndex(of: "*"))
        let expected = Array(raw[raw.index(after: raw.startIndex)..<star].split(separator: ",", omittingEmptySubsequences: false).dropFirst())
        #expect(sentence.talker == "GP")
        #expect(sentence.type == "XYZ")
        #expect(sentence.fields == expected)
        #expect(sentence.fieldCount == expected.count)
        for index in -1...(count + 1) {
            let field = expected.indices.contains(index) && !expected[index].isEmpty ? expected[index] : nil
            #expect(sentence.field(index) == field)
        }
        #expect(sentence.joinedFields(from: 3) == (expected.count > 3 ? expected[3...].joined(separator: ",") : ""))
        let explicit = NMEASentence(talker: "GP", type: "XYZ", fields: expected, raw: raw)
        #expect(sentence == explicit)
        #expect(sentence.hashValue == explicit.hashValue)
    }

    @Test func aLineLongerThan255BytesKeepsItsFields() throws {
        let long = String(repeating: "9", count: 300)
        let body = "GPXYZ,1,\(long),3"
        let raw = "$\(body)*\(NMEAChecksum.hex(NMEAChecksum.compute(Array(body.utf8))))"
        let sentence = try #require(NMEASentence.parse(raw: raw))
        #expect(sentence.fields == ["1", Substring(long), "3"])
        #expect(sentence.field(2) == "3")
    }

    @Test func assigningRawKeepsTheFields() throws {
        var sentence = try #require(NMEASentence.parse(raw: Self.line(fields: 4)))
        let fields = sentence.fields
        sentence.raw = "$GPXYZ*00"
        #expect(sentence.fields == fields)
        #expect(sentence.field(1) == "f1")
    }

    @Test func assigningFieldsReplacesThem() throws {
        var sentence = try #require(NMEASentence.parse(raw: Self.line(fields: 4)))
        sentence.fields = ["a"]
        #expect(sentence.fieldCount == 1)
        #expect(sentence.field(0) == "a")
        #expect(sentence.field(1) == nil)
    }
}
