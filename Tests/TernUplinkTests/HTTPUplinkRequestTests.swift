import AsyncHTTPClient
import Foundation
import Testing
import TernCore
@testable import TernUplink

@Suite struct HTTPUplinkRequestTests {
    private func makeSUT(token: String? = nil) -> HTTPUplink {
        HTTPUplink(
            url: URL(fileURLWithPath: "/unused"), device: UplinkFixture.device, queueID: UplinkFixture.queueID, httpClient: .shared,
            timeout: .seconds(1), logger: UplinkFixture.quiet, token: token)
    }

    @Test func requestCarriesAnIdempotencyKeyFromDeviceQueueAndSeqRange() throws {
        let sut = makeSUT()
        let batch = UplinkFixture.batch(7...9)

        let request = try sut.makeRequest(batch, idempotencyKey: sut.idempotencyKey(batch))

        #expect(request.headers["Idempotency-Key"] == ["tern-test-\(UplinkFixture.queueID.uuidString)-7-9"])
        #expect(request.headers["Content-Type"] == ["application/json"])
        #expect(request.method == .POST)
    }

    @Test func bodyNamesTheQueueThatNumberedTheBatch() throws {
        let body = try makeSUT().body(UplinkFixture.batch(1...2))

        let decoded = try WireBatch.decoder().decode(WireBatch.self, from: body)

        #expect(decoded.queue == UplinkFixture.queueID)
        #expect(decoded.positions.map(\.seq) == [1, 2])
    }

    @Test func requestCarriesABearerTokenWhenConfigured() throws {
        let sut = makeSUT(token: "s3cret")

        let request = try sut.makeRequest(UplinkFixture.batch(1...1), idempotencyKey: "k")

        #expect(request.headers["Authorization"] == ["Bearer s3cret"])
    }

    @Test func requestHasNoAuthorizationWithoutAToken() throws {
        let request = try makeSUT().makeRequest(UplinkFixture.batch(1...1), idempotencyKey: "k")

        #expect(request.headers["Authorization"].isEmpty)
    }
}
