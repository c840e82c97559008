import Foundation
import Testing
import TernCore
import TernSimulation

@Suite(.timeLimit(.minutes(1))) struct CollectorTests {
    @Test func recordsUniquePositionsInArrivalOrder() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            let batch = CollectorFixture.batch(seqs: 1...3)

            let reply = try await CollectorFixture.post(batch, to: sut.url)

            let snapshot = await sut.snapshot()
            #expect(reply.status == 200)
            #expect(reply.body == #"{"accepted":3,"duplicates":0}"#)
            #expect(snapshot.unique == batch.positions)
            #expect(snapshot.requests == 1)
        }
    }

    @Test func countsAResentBatchAsDuplicates() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            let batch = CollectorFixture.batch(seqs: 1...3)
            _ = try await CollectorFixture.post(batch, to: sut.url)

            let reply = try await CollectorFixture.post(batch, to: sut.url)

            let snapshot = await sut.snapshot()
            #expect(reply.body == #"{"accepted":0,"duplicates":3}"#)
            #expect(snapshot.positionsReceived == 6)
            #expect(snapshot.duplicates == 3)
            #expect(snapshot.unique == batch.positions)
        }
    }

    @Test func offlineCollectorRefusesConnections() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            try await sut.goOffline()

            await #expect(throws: (any Error).self) {
                try await CollectorFixture.post(CollectorFixture.batch(seqs: 1...1), to: sut.url)
            }
            #expect(await sut.snapshot().isOnline == false)
        }
    }

    @Test func goingOnlineAgainListensOnTheSamePort() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            let port = sut.port
            _ = try await CollectorFixture.post(CollectorFixture.batch(seqs: 1...1), to: sut.url)
            try await sut.goOffline()

            try await sut.goOnline()

            let reply = try await CollectorFixture.post(CollectorFixture.batch(seqs: 2...2), to: sut.url)
            #expect(sut.port == port)
            #expect(reply.status == 200)
            #expect(await sut.snapshot().unique.map(\.seq) == [1, 2])
        }
    }

    @Test func failureStatusAnswersEveryPostAndRecordsNothing() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            await sut.setFailureStatus(503)

            let reply = try await CollectorFixture.post(CollectorFixture.batch(seqs: 1...2), to: sut.url)
            let snapshot = await sut.snapshot()
            #expect(reply.status == 503)
            #expect(snapshot.unique.isEmpty)
            #expect(snapshot.positionsReceived == 0)
        }
    }

    @Test func malformedJSONIsAnsweredWith400() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            let reply = try await CollectorFixture.post(Data("{not json".utf8), to: sut.url)

            #expect(reply.status == 400)
            #expect(reply.body.contains("malformed batch"))
        }
    }

    @Test func otherPathsAreAnsweredWith404() async throws {
        try await CollectorFixture.withStartedCollector { sut in
            let other = sut.url.deletingLastPathComponent().appendingPathComponent("elsewhere")

            let reply = try await CollectorFixture.post(CollectorFixture.batch(seqs: 1...1), to: other)

            #expect(reply.status == 404)
        }
    }
}
