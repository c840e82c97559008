import AsyncHTTPClient
import Foundation
import Logging
import TernCore

/// Uploads batches as `WireBatch` JSON with one HTTP POST each (http or https): Tern's own protocol,
/// the fastest (docs/servers.md, "Tern's protocol").
///
/// Every request carries `Idempotency-Key: <device>-<queue id>-<first seq>-<last seq>`, so a retried
/// batch has the same key and no other queue's batch ever has it (a queue created afresh numbers from
/// 1 again); the server also dedups by position id. A 2xx may carry a `WireReceipt` saying
/// how much of the batch the server stored (and which record it refuses); only a receipt or an empty
/// answer deletes anything (`WireReceipt`), never a page a portal or a proxy sent. Create the
/// `HTTPClient` with `UplinkHTTPSettings.clientConfiguration(for:)` (no redirects followed, failed
/// connects reported at once).
public final class HTTPUplink: Uplink, Sendable {
    private let url: URL
    private let device: String
    private let queueID: UUID
    private let token: String?
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let logger: Logger

    /// `queueID` is the queue's the batches come from (`PositionQueue.queueID`); `timeout` bounds the
    /// whole request (connect, send, answer); `token` adds `Authorization: Bearer`.
    public init(
        url: URL, device: String, queueID: UUID, httpClient: HTTPClient, timeout: Duration, logger: Logger, token: String? = nil
    ) {
        self.url = url
        self.device = device
        self.queueID = queueID
        self.httpClient = httpClient
        self.timeout = timeout
        self.logger = logger
        self.token = token
    }

    /// Sends `batch`; an empty batch is delivered without a request.
    public func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        guard !batch.isEmpty else { return .delivered }
        let key = idempotencyKey(batch)
        let result: UplinkResult
        do {
            let answer = try await UplinkExchange.perform(
                try makeRequest(batch, idempotencyKey: key), client: httpClient, deadline: timeout, logger: logger)
            result = (200..<300).contains(answer.status)
                ? WireReceipt.outcome(answer, batch: batch) : ResponseClassifier.classify(answer, url: url)
        } catch {
            result = ResponseClassifier.classify(error: error, url: url)
        }
        logger.debug("uplink attempt", metadata: ["key": "\(key)", "count": "\(batch.count)", "result": "\(result)"])
        return result
    }

    /// `<device>-<queue id>-<first seq>-<last seq>`.
    func idempotencyKey(_ batch: [QueuedPosition]) -> String {
        "\(device)-\(queueID.uuidString)-\(batch.first?.sequence ?? 0)-\(batch.last?.sequence ?? 0)"
    }

    /// The request body: the batch as `WireBatch` JSON, naming the device and the queue.
    func body(_ batch: [QueuedPosition]) throws -> Data {
        try WireBatch.encoder().encode(WireBatch(device: device, queue: queueID, queued: batch))
    }

    func makeRequest(_ batch: [QueuedPosition], idempotencyKey: String) throws -> HTTPClientRequest {
        let body = try body(batch)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.body = .bytes(body)
        return request
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
