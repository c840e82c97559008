import AsyncHTTPClient
import Foundation
import NIOSSL
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

    /// A non-2xx answer: a redirect (never followed: `redirect`), else as `classify(status:)`.
    public static func classify(_ answer: UplinkAnswer, url: URL, now: Date = Date()) -> UplinkResult {
        if (300..<400).contains(answer.status) { return redirect(answer, from: url) }
        return classify(status: answer.status, body: answer.text, retryAfter: answer.retryAfter, now: now)
    }

    /// A 3xx to an upload. Following it would be wrong both ways: a 301/302/303 is resent as a GET
    /// without the positions (and a captive portal's login page then answers 200), a 307/308 sends them
    /// to a place nobody configured. So nothing counts as delivered; the uplink pauses (retried every
    /// `backoff.maximum` and when the network changes) with a reason that names the target.
    public static func redirect(_ answer: UplinkAnswer, from url: URL) -> UplinkResult {
        guard let location = answer.location, let target = URL(string: location, relativeTo: url)?.absoluteURL else {
            return .permanent(reason: "uplink.url answers HTTP \(answer.status) (a redirect) without a usable Location: check uplink.url; positions stay queued")
        }
        if target.host?.lowercased() == url.host?.lowercased(), url.scheme == "http", target.scheme == "https" {
            return .permanent(reason: "uplink.url redirects to \(target.absoluteString) (HTTP \(answer.status)): set uplink.url to that https:// URL; positions stay queued until then")
        }
        if target.host?.lowercased() == url.host?.lowercased() {
            return .permanent(reason: "uplink.url redirects to \(target.absoluteString) (HTTP \(answer.status)): set uplink.url to it if the server moved; positions stay queued until then")
        }
        return .permanent(
            reason: "uplink.url redirects to \(target.absoluteString) (HTTP \(answer.status)): a captive portal (log this network in) "
                + "or a moved server (then set uplink.url to it); positions stay queued")
    }

    /// Why the answer to a probe of `url` (`tern doctor`'s HEAD) shows that something else answers
    /// for the server, or nil: a redirect, named with its target, or a 2xx web page (a captive
    /// portal's, or another site's: no tracking server answers with one).
    public static func probeProblem(_ answer: UplinkAnswer, url: URL) -> String? {
        if (300..<400).contains(answer.status), case let .permanent(reason) = redirect(answer, from: url) { return reason }
        if (200..<300).contains(answer.status), answer.contentType?.lowercased().hasPrefix("text/html") == true {
            return "uplink.url answers with a web page (HTTP \(answer.status), text/html): a captive portal (log this network in) "
                + "or not the tracking server's endpoint; positions stay queued until the server answers"
        }
        return nil
    }

    /// A 2xx that is not the server's word that it stored anything (a captive portal's page, a proxy's
    /// error page): retried; nothing is deleted.
    public static func notTheServersAnswer(_ answer: UplinkAnswer, expected: String) -> UplinkResult {
        .retryable(
            reason: "HTTP \(answer.status) with \(answer.described): not the server's answer (\(expected)); "
                + "a captive portal or a proxy in the way? Positions stay queued")
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

    /// Transport failures are retryable, except a URL the client cannot use at all and a certificate
    /// that does not verify (`tlsProblem`): those pause the uplink naming the fix, and are retried every
    /// `backoff_max` all the same (a clock set later, a certificate renewed).
    public static func classify(error: any Error, url: URL? = nil, now: Date = Date()) -> UplinkResult {
        if error is CancellationError { return .retryable(reason: "upload cancelled") }
        if let deadline = error as? UplinkDeadlineExceeded { return .retryable(reason: "\(deadline)") }
        if let problem = tlsProblem(error, url: url, now: now) { return .permanent(reason: problem) }
        if let httpError = error as? HTTPClientError {
            if unusableURL.contains(httpError) || "\(httpError)".contains("unsupportedScheme") {
                return .permanent(reason: "invalid uplink URL (\(httpError)): check uplink.url")
            }
            if timeouts.contains(httpError) { return .retryable(reason: "timed out (\(httpError))") }
            return .retryable(reason: "network error: \(describe(httpError))")
        }
        return .retryable(reason: "network error: \(describe(error))")
    }

    /// What is wrong with the server's certificate, naming the fix, or nil for any other error. The
    /// certificate is always verified (against the system's CAs or `uplink.ca_file`); an expired or
    /// not-yet-valid one is most often the board's clock (no RTC, no time source yet), so the clock
    /// is named beside the CA.
    public static func tlsProblem(_ error: any Error, url: URL?, now: Date = Date()) -> String? {
        let host = url?.host ?? "the server"
        if let error = error as? NIOSSLExtraError, "\(error)".contains("failedToValidateHostname") {
            return "the TLS certificate of \(host) is not for \(host) (\(error)): use the host name the certificate names in uplink.url"
        }
        guard let error = error as? NIOSSLError, case .handshakeFailed = error else { return nil }
        let text = "\(error)"
        guard text.contains("CERTIFICATE_VERIFY_FAILED") else {
            return "the TLS handshake with \(host) failed (\(text.suffix(200))): check that it serves https on that port"
        }
        return "the TLS certificate of \(host) does not verify (CERTIFICATE_VERIFY_FAILED): if it is signed by a private CA, "
            + "set uplink.ca_file to that CA's PEM file; if it is expired or not yet valid, check the server's certificate "
            + "and this board's clock (now \(WireTime.format(now)); without an RTC it is right only once NTP or the GPS set it)"
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
