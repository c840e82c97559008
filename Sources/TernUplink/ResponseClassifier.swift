import AsyncHTTPClient
import Foundation
import TernCore

/// Turns an HTTP status or a transport error into an `UplinkResult` (pure).
public enum ResponseClassifier {
    /// 2xx → delivered; 408, 425, 429, 5xx → retryable (after `Retry-After` when the server says);
    /// other statuses → permanent with a hint.
    public static func classify(status: Int, body: String = "", retryAfter: String? = nil, now: Date = Date()) -> UplinkResult {
        let detail = body.isEmpty ? "" : ": \(body.prefix(200))"
        switch status {
        case 200..<300:
            return .delivered
        case 408, 425, 429, 500..<600:
            return .retryable(reason: "server answered HTTP \(status)\(detail)", after: Self.retryAfter(retryAfter, now: now))
        default:
            return .permanent(reason: "server rejected the batch with HTTP \(status)\(detail): \(hint(for: status))")
        }
    }

    /// Whether a transport error means the server took the connection and closed it without an answer:
    /// what Traccar does when it cannot decode a value (a malformed record, not a dead network).
    public static func closedWithoutAnswer(_ error: any Error) -> Bool {
        guard let httpError = error as? HTTPClientError else { return false }
        return httpError == .remoteConnectionClosed || "\(httpError)".contains("remoteConnectionClosed")
    }

    /// What a human should check after a permanent rejection.
    static func hint(for status: Int) -> String {
        switch status {
        case 401, 403: "check uplink.token and uplink.url"
        case 404: "check uplink.url"
        case 413: "batch too large: lower uplink.batch_size"
        case 400, 422: "the server cannot parse the batch: check that it speaks Tern's wire format"
        default: "check the server logs and the uplink configuration"
        }
    }

    private static let unusableURL: [HTTPClientError] = [.invalidURL, .emptyHost, .emptyScheme, .missingSocketPath]
    private static let timeouts: [HTTPClientError] = [.deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout]

    /// Transport failures are retryable, except a URL the client cannot use at all.
    public static func classify(error: any Error) -> UplinkResult {
        if error is CancellationError { return .retryable(reason: "upload cancelled") }
        if let httpError = error as? HTTPClientError {
            if unusableURL.contains(httpError) || "\(httpError)".contains("unsupportedScheme") {
                return .permanent(reason: "invalid uplink URL (\(httpError)): check uplink.url")
            }
            if timeouts.contains(httpError) { return .retryable(reason: "timed out (\(httpError))") }
            return .retryable(reason: "network error: \(describe(httpError))")
        }
        return .retryable(reason: "network error: \(describe(error))")
    }

    /// A transport error as a person reads it: NIO's socket errors end in `(errno: N)`, said here as the
    /// C library says it ("Connection refused"); other errors as they describe themselves.
    public static func describe(_ error: any Error) -> String {
        let text = "\(error)"
        guard let range = text.range(of: #"errno: \d+"#, options: .regularExpression),
              let code = Int32(text[range].dropFirst("errno: ".count))
        else { return text }
        return String(cString: strerror(code))
    }
}

extension ResponseClassifier {
    /// The wait a `Retry-After` header asks for: delay-seconds (`120`) or an HTTP date
    /// (`Wed, 21 Oct 2026 07:28:00 GMT`, counted from `now`); nil when absent or unreadable.
    public static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .seconds(max(0, Int64(date.timeIntervalSince(now).rounded(.up))))
    }
}
