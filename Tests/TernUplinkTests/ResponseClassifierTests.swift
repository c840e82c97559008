import Testing
import TernCore
import TernUplink

@Suite struct ResponseClassifierTests {
    @Test(arguments: [200, 201, 202, 204])
    func successStatusesAreDelivered(status: Int) {
        #expect(ResponseClassifier.classify(status: status) == .delivered)
    }

    @Test(arguments: [408, 425, 429, 500, 502, 503, 504])
    func transientStatusesAreRetryable(status: Int) {
        #expect(ResponseClassifier.classify(status: status).isRetryable)
    }

    @Test(arguments: [
        (401, "uplink.token"), (403, "uplink.token"), (404, "uplink.url"), (413, "uplink.batch_size"),
    ])
    func rejectionsArePermanentWithAHint(status: Int, hint: String) {
        let result = ResponseClassifier.classify(status: status)

        #expect(result.isPermanent)
        #expect(result.reason.contains("HTTP \(status)"))
        #expect(result.reason.contains(hint))
    }

    @Test func transportErrorsAreRetryableAndNamed() {
        struct Refused: Error, CustomStringConvertible { var description: String { "connection refused" } }

        let result = ResponseClassifier.classify(error: Refused())

        #expect(result == .retryable(reason: "network error: connection refused"))
    }

    @Test func socketErrorsAreSaidAsTheCLibrarySaysThem() {
        struct Socket: Error, CustomStringConvertible {
            var description: String { "connection reset (error set): Connection refused) (errno: 111)" }
        }

        #expect(ResponseClassifier.classify(error: Socket()) == .retryable(reason: "network error: Connection refused"))
    }
}
