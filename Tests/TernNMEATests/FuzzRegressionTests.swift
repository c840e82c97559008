import Foundation
import TernCore
import Testing

@testable import TernNMEA

/// Inputs the libFuzzer harness (`Tests/Fuzz/run.sh`) found to crash the decoder, each reduced to the
/// sentence that did it. Decoding them must fail cleanly (or succeed) — never trap.
struct FuzzRegressionTests {
    private func decode(_ body: String) -> Result<NMEAMessage, NMEADecodingError> {
        var framer = NMEAFramer()
        guard let framed = framer.append(Array((sentence(body) + "\r\n").utf8)).first else {
            Issue.record("the framer rejected \(body)")
            return .failure(.missingField(sentence: body, field: "all"))
        }
        return Result { () throws(NMEADecodingError) in try NMEADecoder().decode(framed) }
    }

    @Test func gsaWithoutSatelliteFieldsDecodes() {
        guard case let .success(.gsa(gsa)) = decode("GPGSA,A") else {
            Issue.record("a truncated GSA should still decode")
            return
        }
        #expect(gsa.satellites.isEmpty)
    }

    @Test func integerFieldThatOverflowsOnTheLastDigitIsRejected() {
        // 9223372036854775807 is Int.max; one more in the last digit overflowed the addition.
        #expect(NMEANumber.int("9223372036854775808") == nil)
        #expect(NMEANumber.int("9223372036854775807") == Int.max)
    }

    @Test func zdaWithAnImplausibleYearIsRejected() {
        guard case .failure = decode("GPZDA,201530.00,04,07,99999,00,00") else {
            Issue.record("year 99999 must not become a date")
            return
        }
    }

    @Test func datesBeforeGPSBeganAreNotDates() {
        #expect(NMEADate(year: 1979, month: 12, day: 31) == nil)
        #expect(NMEADate(year: 1980, month: 1, day: 6) != nil)
    }

    /// Every input the fuzzer ever saved (`Tests/Fuzz/crashes/`) goes through `tern nmea decode`'s path.
    @Test func savedFuzzerFindingsDecodeWithoutTrapping() throws {
        let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../Fuzz/crashes")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        #expect(files.count >= 5)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: directory.appending(path: file)))
            var sut = NMEALogDecoder()
            var output: [UInt8] = []
            sut.append(bytes) { GPSDFixRecord($0).write(to: &output) }
            sut.finish { GPSDFixRecord($0).write(to: &output) }
            #expect(sut.stats.bytes == bytes.count, "\(file)")
        }
    }
}
