import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// A server's answer to one upload request, as far as Tern reads it.
public struct UplinkAnswer: Sendable, Hashable {
    public var status: Int
    public var contentType: String?
    /// The `Location` header (a redirect's target).
    public var location: String?
    public var retryAfter: String?
    /// The first `UplinkExchange.bodyLimit` bytes of the body.
    public var body: [UInt8]
    /// Whether the body went on past them (the rest was never read).
    public var truncated: Bool

    public init(
        status: Int, contentType: String? = nil, location: String? = nil, retryAfter: String? = nil, body: [UInt8] = [],
        truncated: Bool = false
    ) {
        self.status = status
        self.contentType = contentType
        self.location = location
        self.retryAfter = retryAfter
        self.body = body
        self.truncated = truncated
    }

    public init(status: Int, contentType: String? = nil, body: String) {
        self.init(status: status, contentType: contentType, body: Array(body.utf8))
    }

    /// The body as text (what was read of it).
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// Whether the body is empty, or only white space.
    public var bodyIsBlank: Bool { !truncated && body.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) } }

    /// The first character of the body that is not white space.
    public var firstCharacter: Character? {
        body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }.map { Character(UnicodeScalar($0)) }
    }

    /// What came back, for a message: `text/html, 5120 bytes: <!DOCTYPE html><html>…`.
    public var described: String {
        let size = truncated ? "over \(body.count) bytes" : "\(body.count) bytes"
        let start = text.prefix(80).map { $0.isASCII && !$0.isNewline && ($0.asciiValue ?? 0) >= 0x20 ? $0 : " " }
        return "\(contentType ?? "no Content-Type"), \(size)" + (body.isEmpty ? "" : ": " + String(start))
    }
}

/// An answer that did not arrive whole within the request's deadline.
public struct UplinkDeadlineExceeded: Error, Hashable, CustomStringConvertible {
    public let limit: Duration

    public var description: String {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return "timed out: the server did not finish its answer within \(String(format: "%g", seconds)) s "
            + "(a server or a link this slow, or one that trickles)"
    }
}

/// One upload request and its answer, the way every HTTP uplink makes it:
/// - one deadline for all of it, the body included (async-http-client's own stops counting once the
///   headers are in, so a server that trickles its body would hold the forwarder for ever);
/// - at most `bodyLimit` bytes of the body read (the connection is dropped instead of reading on);
/// - redirects are not followed: the client configuration disallows them
///   (`UplinkHTTPSettings.clientConfiguration`), and the 3xx comes back as the answer.
public enum UplinkExchange {
    /// The most of an answer's body that is read: receipts and error pages are far smaller.
    public static let bodyLimit = 64 * 1024

    public static func perform(
        _ request: HTTPClientRequest, client: HTTPClient, deadline limit: Duration, bodyLimit: Int = bodyLimit, logger: Logger
    ) async throws -> UplinkAnswer {
        try await withThrowingTaskGroup(of: UplinkAnswer?.self) { group in
            group.addTask {
                let response = try await client.execute(request, timeout: .nanoseconds(limit.nanoseconds), logger: logger)
                var body: [UInt8] = []
                var truncated = false
                for try await chunk in response.body {
                    let room = bodyLimit - body.count
                    if chunk.readableBytes > room {
                        body += chunk.readableBytesView.prefix(room)
                        truncated = true
                        break
                    }
                    body += chunk.readableBytesView
                }
                return UplinkAnswer(
                    status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
                    location: response.headers.first(name: "Location"), retryAfter: response.headers.first(name: "Retry-After"),
                    body: body, truncated: truncated)
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let answer = first else { throw UplinkDeadlineExceeded(limit: limit) }
            return answer
        }
    }
}
