import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import TernCore

/// Uploads to Traccar's OsmAnd endpoint (port 5055 by default), one position per request, in order.
///
/// Traccar computes distances and filters from the order positions arrive in, so by default one
/// request is in flight at a time (`parallel` 1, on a kept-alive connection); with a larger
/// `parallel` that many go out together and only the contiguous prefix of successes counts as
/// delivered (the rest are sent again: Traccar's duplicate filter drops a repeated time).
///
/// Traccar's answers: an empty 200 stored (a 200 with a page is a portal's: kept, retried); a
/// redirect pauses the uplink, naming the target; 400 or 404 when it cannot place the position on a device (an
/// unknown device id): a configuration error that pauses the uplink, nothing is dropped; a
/// connection closed without an answer when a value would not decode: when the next position then
/// goes through, that one record is `.rejected` and the forwarder quarantines it after a few
/// attempts instead of retrying forever (a network that resets everything only delays).
public final class TraccarUplink: Uplink, Sendable {
    private let url: URL
    private let device: String
    private let format: OsmAnd.Format
    private let httpClient: HTTPClient
    private let parallel: Int
    private let timeout: Duration
    private let logger: Logger

    public init(
        url: URL, device: String, format: OsmAnd.Format = .query, httpClient: HTTPClient, parallel: Int = 1,
        timeout: Duration = .seconds(30), logger: Logger
    ) {
        self.url = url
        self.device = device
        self.format = format
        self.httpClient = httpClient
        self.parallel = max(1, parallel)
        self.timeout = timeout
        self.logger = logger
    }

    public func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        var delivered: Int64?
        var start = 0
        while start < batch.count {
            let window = Array(batch[start..<min(start + parallel, batch.count)])
            start += window.count
            let results = await withTaskGroup(of: (Int, UplinkResult).self) { group in
                for (index, queued) in window.enumerated() {
                    group.addTask { (index, await self.sendOne(queued)) }
                }
                var results = [UplinkResult](repeating: .delivered, count: window.count)
                for await (index, result) in group { results[index] = result }
                return results
            }
            for (offset, (queued, result)) in zip(window, results).enumerated() {
                guard result == .delivered else {
                    let next = start - window.count + offset + 1
                    let outcome = await confirmRefusal(result, of: queued, next: next < batch.count ? batch[next] : nil)
                    return delivered.map { .partial(through: $0, rest: outcome) } ?? outcome
                }
                delivered = queued.sequence
            }
        }
        return .delivered
    }

    /// A connection closed without an answer is Traccar refusing a value, or a broken network: the
    /// record is called `.rejected` only when the next one goes through at once (the server works,
    /// this record does not); otherwise it is retryable and nothing is counted against it.
    private func confirmRefusal(_ result: UplinkResult, of queued: QueuedPosition, next: QueuedPosition?) async -> UplinkResult {
        guard case let .rejected(sequence, reason) = result else { return result }
        guard let next, await sendOne(next) == .delivered else {
            return .retryable(reason: "Traccar closed the connection without answering (position \(sequence)); retrying")
        }
        return .rejected(sequence: sequence, reason: reason + " (the next position went through)")
    }

    /// One position, one request.
    func sendOne(_ queued: QueuedPosition) async -> UplinkResult {
        do {
            let answer = try await UplinkExchange.perform(try request(queued), client: httpClient, deadline: timeout, logger: logger)
            return classify(answer)
        } catch {
            if ResponseClassifier.closedWithoutAnswer(error) {
                return .rejected(
                    sequence: queued.sequence,
                    reason: "Traccar closed the connection without answering position \(queued.sequence): it could not decode one of its values")
            }
            return ResponseClassifier.classify(error: error, url: url)
        }
    }

    func request(_ queued: QueuedPosition) throws -> HTTPClientRequest {
        switch format {
        case .query:
            var request = HTTPClientRequest(url: url.absoluteString + (url.query == nil ? "?" : "&") + OsmAnd.query(queued, device: device))
            request.method = .POST
            return request
        case .json:
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: OsmAnd.json(queued, device: device)))
            return request
        }
    }

    /// Traccar's answer to one position. Its HTTP protocols answer a stored position with an empty
    /// 200 (`BaseHttpProtocolDecoder.sendResponse`: the status and `Content-Length: 0`), so a 2xx
    /// with a body is somebody else's page (a captive portal, a proxy) and deletes nothing.
    func classify(_ answer: UplinkAnswer) -> UplinkResult {
        switch answer.status {
        case 200..<300:
            answer.bodyIsBlank
                ? .delivered : ResponseClassifier.notTheServersAnswer(answer, expected: "Traccar answers a stored position with an empty 200")
        case 400, 404:
            .permanent(
                reason: "Traccar answered HTTP \(answer.status): it has no device with identifier '\(device)'. Add one in Traccar "
                    + "(Devices → +, Identifier \(device)) or set `device` to an existing identifier; uplink.url must be the "
                    + "OsmAnd port (5055 by default)")
        default:
            ResponseClassifier.classify(answer, url: url)
        }
    }
}
