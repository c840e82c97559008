import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import TernCore
import TernGateway
import TernStore
import TernTesting
import TernUplink

/// The real store-and-forward path (queue, forwarder, HTTP uplink) with positions coming in, until killed.
struct Forward: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enqueues positions and forwards them to a collector until killed, printing what it stored, sent and acknowledged.")

    @Option(help: "The queue's database file.")
    var path: String

    @Option(help: "The collector's positions URL.")
    var url: String

    @Option(help: "Seeds the group sizes and the forwarder's jitter.")
    var seed: UInt64 = 1

    @Option(help: "Positions per upload.")
    var batchSize = 25

    func run() async throws {
        guard let url = URL(string: url) else { throw ValidationError("not a URL: \(url)") }
        let logger = Logger(label: "tern.queue.child")
        let queue = try SQLitePositionQueue(path: path, logger: logger)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try UplinkHTTPSettings().clientConfiguration(for: url, environment: [:]))
        let uplink = HTTPUplink(url: url, device: "crash-harness", queueID: queue.queueID, httpClient: httpClient, timeout: .seconds(5), logger: logger)
        let forwarder = Forwarder(
            queue: TracedQueue(queue), uplink: TracedUplink(uplink), batchSize: batchSize, seed: seed, clock: ContinuousClock(),
            logger: logger)
        emit(.ready)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await forwarder.run() }
            group.addTask {
                var random = SplitMix64(seed: seed)
                var index = 0
                while !Task.isCancelled {
                    let count = Int.random(in: 1...5, using: &random)
                    let positions = (0..<count).map { makePosition(index + $0, using: &random) }
                    do {
                        if count == 1 {
                            try await queue.enqueue(positions[0])
                        } else {
                            _ = try await queue.enqueue(contentsOf: positions)
                        }
                    } catch {
                        emit(.failed("enqueue of \(count) positions: \(error)"))
                        return
                    }
                    for position in positions { emit(.stored(position.id)) }
                    index += count
                    forwarder.positionsAvailable()
                    try? await Task.sleep(for: .milliseconds(Int.random(in: 0...2, using: &random)))
                }
            }
            await group.next()
            group.cancelAll()
        }
        try? await httpClient.shutdown()
        throw ExitCode.failure
    }
}

/// Sends everything queued, then exits 0 if the queue is empty.
struct Drain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Uploads everything queued (a clean shutdown's drain).")

    @Option(help: "The queue's database file.")
    var path: String

    @Option(help: "The collector's positions URL.")
    var url: String

    func run() async throws {
        guard let url = URL(string: url) else { throw ValidationError("not a URL: \(url)") }
        let logger = Logger(label: "tern.queue.child")
        let queue = try SQLitePositionQueue(path: path, logger: logger)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try UplinkHTTPSettings().clientConfiguration(for: url, environment: [:]))
        let uplink = HTTPUplink(url: url, device: "crash-harness", queueID: queue.queueID, httpClient: httpClient, timeout: .seconds(5), logger: logger)
        let forwarder = Forwarder(queue: queue, uplink: uplink, batchSize: 500, clock: ContinuousClock(), logger: logger)
        let emptied = await forwarder.drain(timeout: .seconds(30))
        let left = try await queue.count()
        try? await httpClient.shutdown()
        emit(.drained(left: left))
        guard emptied, left == 0 else { throw ExitCode.failure }
    }
}

/// The queue, printing each acknowledgement before and after it runs.
struct TracedQueue: PositionQueue {
    let queue: SQLitePositionQueue

    init(_ queue: SQLitePositionQueue) { self.queue = queue }

    var queueID: UUID { queue.queueID }

    func enqueue(_ position: Position) async throws -> Int64 { try await queue.enqueue(position) }
    func enqueue(contentsOf positions: [Position]) async throws -> EnqueueResult { try await queue.enqueue(contentsOf: positions) }
    func oldest(limit: Int) async throws -> [QueuedPosition] { try await queue.oldest(limit: limit) }
    func count() async throws -> Int { try await queue.count() }
    func newest() async throws -> QueuedPosition? { try await queue.newest() }
    func remove(sequence: Int64) async throws { try await queue.remove(sequence: sequence) }
    func quarantine(sequence: Int64, reason: String) async throws { try await queue.quarantine(sequence: sequence, reason: reason) }

    func acknowledge(through sequence: Int64) async throws {
        emit(.acknowledging(through: sequence))
        try await queue.acknowledge(through: sequence)
        emit(.acknowledged(through: sequence))
    }
}

/// The uplink, printing each batch before it goes and its outcome after.
struct TracedUplink: Uplink {
    let uplink: HTTPUplink

    init(_ uplink: HTTPUplink) { self.uplink = uplink }

    func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        emit(.sending(first: batch.first?.sequence ?? 0, last: batch.last?.sequence ?? 0))
        let result = await uplink.send(batch)
        emit(.sent(delivered: result == .delivered))
        return result
    }
}
