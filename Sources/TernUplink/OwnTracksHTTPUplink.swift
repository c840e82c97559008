import AsyncHTTPClient
import Foundation
import Logging
import TernCore

/// Uploads positions to an OwnTracks Recorder (or anything speaking its HTTP mode): one POST of one
/// `OwnTracksLocation` per position, oldest first, to the configured URL (e.g.
/// `http://recorder:8083/pub`), naming the user and device with the `X-Limit-U`/`X-Limit-D` headers
/// and the `u`/`d` query parameters (the Recorder reads either), with HTTP basic authentication when
/// `uplink.username` is set (for a Recorder behind a proxy that checks it).
///
/// The batch stops at the first position the server does not take: the answer is `.partial(through:)`
/// the last one it took (or the failure alone when it took none). 2xx delivered; 400/422 reject that
/// one position; 401/403/404 are permanent (configuration); 408, 425, 429, 5xx and network errors
/// are retryable, with the server's `Retry-After`. A repeat after a lost answer carries the same
/// `tern_id`; the Recorder itself appends it to its history again (it keeps no ids).
public final class OwnTracksHTTPUplink: Uplink, Sendable {
    private let url: URL
    private let endpoint: String
    private let user: String
    private let device: String
    private let authorization: String?
    private let trackerID: OwnTracksTrackerID
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// `url`: `uplink.url`; `username`/`password`: `uplink.username`/`uplink.password` (the Recorder's
    /// user, `tern` when unset; basic authentication when set); `trackerID`: `uplink.tracker_id`;
    /// `timeout`: per request, its answer included. Create `httpClient` with
    /// `UplinkHTTPSettings.clientConfiguration(for:)`.
    public init(
        url: URL, device: String, username: String?, password: String?, trackerID: String?,
        httpClient: HTTPClient, timeout: Duration, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(UplinkConfigError) {
        guard let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw UplinkConfigError(
                key: "uplink.url", found: url.absoluteString,
                expected: "an http:// or https:// URL, e.g. http://recorder.example:8083/pub")
        }
        if username?.isEmpty ?? true, password?.isEmpty == false {
            throw UplinkConfigError(key: "uplink.username", "is empty but uplink.password is set: set both or neither")
        }
        self.url = url
        user = username.flatMap { $0.isEmpty ? nil : $0 } ?? "tern"
        endpoint = Self.endpoint(url, user: user, device: device)
        authorization = username.flatMap { $0.isEmpty ? nil : $0 }.map { name in
            "Basic " + Data("\(name):\(password ?? "")".utf8).base64EncodedString()
        }
        self.device = device
        self.trackerID = try OwnTracksTrackerID(configured: trackerID, device: device)
        self.httpClient = httpClient
        self.timeout = timeout
        self.logger = logger
        self.now = now
    }

    /// Sends the batch one position at a time, in order, and stops at the first failure.
    public func send(_ batch: [QueuedPosition]) async -> UplinkResult {
        for (index, queued) in batch.enumerated() {
            let result = await send(queued)
            guard result == .delivered else {
                logger.debug(
                    "owntracks http stopped", metadata: ["seq": "\(queued.sequence)", "result": "\(result)"])
                return index == 0 ? result : .partial(through: batch[index - 1].sequence, rest: result)
            }
        }
        return .delivered
    }

    private func send(_ queued: QueuedPosition) async -> UplinkResult {
        let request: HTTPClientRequest
        do {
            request = try makeRequest(queued)
        } catch {
            return .rejected(sequence: queued.sequence, reason: error.description)
        }
        do {
            let answer = try await UplinkExchange.perform(request, client: httpClient, deadline: timeout, logger: logger)
            return Self.classify(answer, url: url, sequence: queued.sequence)
        } catch {
            return ResponseClassifier.classify(error: error, url: url)
        }
    }

    func makeRequest(_ queued: QueuedPosition) throws(OwnTracksEncodingError) -> HTTPClientRequest {
        let body = try OwnTracksLocation(queued, trackerID: trackerID, createdAt: now()).encoded()
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Limit-U", value: user)
        request.headers.add(name: "X-Limit-D", value: device)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        request.body = .bytes(body)
        return request
    }

    /// What the Recorder's answer to one position means (pure). A 2xx counts only as the OwnTracks
    /// HTTP mode defines it (booklet, "HTTP"): a JSON array (`[]`, or cards and friends' locations,
    /// however long), or nothing; a page a portal or a proxy sent is not the Recorder's answer.
    static func classify(_ answer: UplinkAnswer, url: URL, sequence: Int64) -> UplinkResult {
        let status = answer.status
        let detail = answer.body.isEmpty ? "" : ": \(answer.text.prefix(200))"
        switch status {
        case 200..<300:
            guard answer.bodyIsBlank || answer.firstCharacter == "[" else {
                return ResponseClassifier.notTheServersAnswer(answer, expected: "an OwnTracks Recorder answers a JSON array")
            }
            return .delivered
        case 300..<400:
            return ResponseClassifier.redirect(answer, from: url)
        case 400, 422:
            return .rejected(sequence: sequence, reason: "the OwnTracks server refused position \(sequence) with HTTP \(status)\(detail)")
        case 401, 403:
            return .permanent(
                reason: "the OwnTracks server refused our credentials with HTTP \(status)\(detail): "
                    + "check uplink.username and uplink.password")
        case 404:
            return .permanent(
                reason: "the OwnTracks server has no such endpoint (HTTP 404)\(detail): check uplink.url "
                    + "(an OwnTracks Recorder takes positions at http://HOST:8083/pub)")
        default:
            return ResponseClassifier.classify(status: status, body: answer.text, retryAfter: answer.retryAfter)
        }
    }

    /// `url` with `u=USER&d=DEVICE` added unless it names them already.
    static func endpoint(_ url: URL, user: String, device: String) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        var items = components.queryItems ?? []
        if !items.contains(where: { $0.name == "u" }) { items.append(URLQueryItem(name: "u", value: user)) }
        if !items.contains(where: { $0.name == "d" }) { items.append(URLQueryItem(name: "d", value: device)) }
        components.queryItems = items
        return components.string ?? url.absoluteString
    }
}
