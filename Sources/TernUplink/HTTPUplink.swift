import AsyncHTTPClient
import Foundation
import Logging
import TernCore

/// Uploads batches as `WireBatch` JSON with one HTTP POST each (http or https): Tern's own protocol,
/// the fastest (README, "The server contract").
///
/// Every request carries `Idempotency-Key: <device>-<first seq>-<last seq>`, so a retried batch
/// has the same key; the server also dedups by position id. A 2xx may carry a `WireReceipt` saying
/// how much of the batch the server stored (and which record it refuses); only a receipt or an empty
/// answer deletes anything (`WireReceipt`), never a page a portal or a proxy sent. Create the
/// `HTTPClient` with `UplinkHTTPSettings.clientConfiguration(for:)` (no redirects followed, failed
/// connects reported at once).
public final class HTTPUplink: Uplink, Sendable {
    private let url: URL
    private let device: String
    private let token: String?
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let logger: Logger

    /// `timeout` bounds the whole request (connect, send, answer); `token` adds `Authorization: Bearer`.
    public init(
        url: URL, device: String, httpClient: HTTPClient, timeout: Duration, logger: Logger, token: String? = nil
    ) {
        self.url = url
        self.device = device
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
            result = ResponseClassifier.classify(error: error)
        }
        logger.debug("uplink attempt", metadata: ["key": "\(key)", "count": "\(batch.count)", "result": "\(result)"])
        return result
    }

    /// `<device>-<first seq>-<last seq>`.
    func idempotencyKey(_ batch: [QueuedPosition]) -> String {
        "\(device)-\(batch.first?.sequence ?? 0)-\(batch.last?.sequence ?? 0)"
    }

    func makeRequest(_ batch: [QueuedPosition], idempotencyKey: String) throws -> HTTPClientRequest {
        let body = try WireBatch.encoder().encode(WireBatch(device: device, queued: batch))
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
