import AsyncHTTPClient
import Foundation
import Testing
import TernCore
@testable import TernUplink

@Suite(.timeLimit(.minutes(1))) struct OwnTracksHTTPUplinkTests {
    /// Runs `body` with an uplink pointed at a started Recorder stub answering `replies` first.
    private func withRecorder(
        replies: [RecorderStub.Reply] = [], username: String? = "alice", password: String? = "s3cret",
        _ body: (OwnTracksHTTPUplink, RecorderStub) async throws -> Void
    ) async throws {
        let recorder = try await RecorderStub.start(replies: replies)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try UplinkHTTPSettings().clientConfiguration(for: nil, environment: [:]))
        do {
            let sut = try OwnTracksHTTPUplink(
                url: recorder.url, device: "pi-gps-01", username: username, password: password, trackerID: nil,
                httpClient: client, timeout: .seconds(5), logger: UplinkFixture.quiet)
            try await body(sut, recorder)
        } catch {
            try? await client.shutdown()
            try? await recorder.stop()
            throw error
        }
        try await client.shutdown()
        try await recorder.stop()
    }

    private func ternIDs(_ requests: [RecorderStub.Request]) throws -> [String] {
        try requests.map { request in
            let object = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
            return try #require(object?["tern_id"] as? String)
        }
    }

    @Test func eachPositionIsPostedAsOneLocationInOrder() async throws {
        try await withRecorder { sut, recorder in
            let batch = UplinkFixture.batch(1...3)

            #expect(await sut.send(batch) == .delivered)

            let ids = try ternIDs(recorder.requests)
            #expect(ids == batch.map(\.position.id.uuidString))
            #expect(recorder.requests.allSatisfy { $0.method == "POST" && $0.headers["content-type"] == "application/json" })
        }
    }

    @Test func requestsNameUserAndDeviceByHeadersAndQueryAndAuthenticate() async throws {
        try await withRecorder { sut, recorder in
            _ = await sut.send(UplinkFixture.batch(1...1))

            let request = try #require(recorder.requests.first)
            #expect(request.uri == "/pub?u=alice&d=pi-gps-01")
            #expect(request.headers["x-limit-u"] == "alice")
            #expect(request.headers["x-limit-d"] == "pi-gps-01")
            #expect(request.headers["authorization"] == "Basic " + Data("alice:s3cret".utf8).base64EncodedString())
        }
    }

    @Test func withoutAUsernameTheUserIsTernAndThereIsNoAuthorization() async throws {
        try await withRecorder(username: nil, password: nil) { sut, recorder in
            _ = await sut.send(UplinkFixture.batch(1...1))

            let request = try #require(recorder.requests.first)
            #expect(request.headers["x-limit-u"] == "tern")
            #expect(request.headers["authorization"] == nil)
        }
    }

    @Test func aFailureStopsTheBatchAndReportsTheDeliveredPrefix() async throws {
        try await withRecorder(replies: [.init(status: 200), .init(status: 200), .init(status: 503)]) { sut, recorder in
            let result = await sut.send(UplinkFixture.batch(1...5))

            guard case let .partial(through, rest) = result else {
                Issue.record("expected a partial delivery, got \(result)")
                return
            }
            #expect(through == 2)
            #expect(rest.isRetryable && rest.reason.contains("503"))
            #expect(recorder.requests.count == 3)
        }
    }

    @Test func retryAfterOfTheServerIsPassedOn() async throws {
        try await withRecorder(replies: [.init(status: 429, headers: ["Retry-After": "7"])]) { sut, _ in
            let result = await sut.send(UplinkFixture.batch(1...2))

            #expect(result == .retryable(reason: "server answered HTTP 429", after: .seconds(7)))
        }
    }

    @Test(arguments: [401, 403])
    func refusedCredentialsArePermanentAndNameTheKeys(status: Int) async throws {
        try await withRecorder(replies: [.init(status: status, body: "denied")]) { sut, _ in
            let result = await sut.send(UplinkFixture.batch(1...2))

            #expect(result.isPermanent)
            #expect(result.reason.contains("uplink.username") && result.reason.contains("uplink.password"))
            #expect(result.reason.contains("\(status)"))
        }
    }

    @Test func badRequestRejectsThatOnePositionAfterTheDeliveredOnes() async throws {
        try await withRecorder(replies: [.init(status: 200), .init(status: 400, body: "bad lat")]) { sut, recorder in
            let result = await sut.send(UplinkFixture.batch(4...6))

            #expect(result == .partial(through: 4, rest: .rejected(
                sequence: 5, reason: "the OwnTracks server refused position 5 with HTTP 400: bad lat")))
            #expect(recorder.requests.count == 2)
        }
    }

    @Test func aPositionThatCannotBeWrittenIsRejectedWithoutARequest() async throws {
        try await withRecorder { sut, recorder in
            var batch = UplinkFixture.batch(1...2)
            batch[0].position.fix.coordinate.latitude = .nan

            let result = await sut.send(batch)

            guard case .rejected(sequence: 1, _) = result else {
                Issue.record("expected position 1 rejected, got \(result)")
                return
            }
            #expect(recorder.requests.isEmpty)
        }
    }

    @Test func refusedConnectionIsRetryable() async throws {
        try await withRecorder { sut, recorder in
            try await recorder.stop()

            let result = await sut.send(UplinkFixture.batch(1...1))

            #expect(result.isRetryable)
        }
    }

    @Test func emptyBatchIsDeliveredWithoutARequest() async throws {
        try await withRecorder { sut, recorder in
            #expect(await sut.send([]) == .delivered)
            #expect(recorder.requests.isEmpty)
        }
    }

    @Test func passwordWithoutAUsernameIsAConfigErrorNamingUplinkUsername() throws {
        let url = try #require(URL(string: "http://recorder:8083/pub"))

        let error = #expect(throws: UplinkConfigError.self) {
            try OwnTracksHTTPUplink(
                url: url, device: "d", username: nil, password: "p", trackerID: nil,
                httpClient: .shared, timeout: .seconds(1), logger: UplinkFixture.quiet)
        }

        #expect(error?.key == "uplink.username")
    }

    @Test func anURLThatIsNotHTTPIsAConfigErrorNamingUplinkURL() throws {
        let url = try #require(URL(string: "mqtt://broker:1883"))

        let error = #expect(throws: UplinkConfigError.self) {
            try OwnTracksHTTPUplink(
                url: url, device: "d", username: nil, password: nil, trackerID: nil,
                httpClient: .shared, timeout: .seconds(1), logger: UplinkFixture.quiet)
        }

        #expect(error?.key == "uplink.url")
        #expect(error?.description.contains("mqtt://broker:1883") == true)
    }

    @Test(arguments: [("120", Duration.seconds(120)), ("0", .seconds(0)), ("soon", nil), ("", nil)])
    func retryAfterReadsDelaySeconds(header: String, expected: Duration?) {
        #expect(ResponseClassifier.retryAfter(header) == expected)
    }

    @Test func retryAfterReadsAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)  // Wed, 18 Nov 2026 11:06:40 GMT

        #expect(ResponseClassifier.retryAfter("Wed, 18 Nov 2026 11:07:10 GMT", now: now) == .seconds(30))
    }
}
