import Foundation
import TernCore

/// What a server running Tern's protocol answers with a 2xx: how much of the batch it stored.
///
/// - No body (204, or an empty 2xx), or a JSON object without `stored_through` (e.g.
///   `{"accepted": 3}`): the whole batch is stored.
/// - `{"stored_through": 1234}`: positions up to and including sequence 1234 are stored (the rest of
///   the batch is sent again later).
/// - `{"stored_through": 1233, "rejected": {"seq": 1234, "reason": "lat out of range"}}`: 1234, the
///   next position after `stored_through`, will never be accepted (the forwarder quarantines it after
///   a few attempts).
/// - Anything else (an HTML page, a JSON array, an answer over 64 KiB) is no receipt: nothing is
///   deleted. A receipt is checked against the batch: `stored_through` past its end stores only the
///   batch; a `rejected` that is not the position right after `stored_through` is not believed.
public struct WireReceipt: Codable, Sendable, Hashable {
    public struct Rejected: Codable, Sendable, Hashable {
        public var seq: Int64
        public var reason: String?
    }

    public var storedThrough: Int64?
    public var rejected: Rejected?

    enum CodingKeys: String, CodingKey {
        case storedThrough = "stored_through"
        case rejected
    }

    /// The outcome of a 2xx answer to `batch`.
    static func outcome(_ answer: UplinkAnswer, batch: [QueuedPosition]) -> UplinkResult {
        guard let first = batch.first?.sequence, let last = batch.last?.sequence else { return .delivered }
        if answer.bodyIsBlank { return .delivered }
        if answer.truncated {
            return .retryable(
                reason: "HTTP \(answer.status) with \(answer.described): no receipt is that long (\(UplinkExchange.bodyLimit / 1024) KiB "
                    + "at most are read); check that uplink.url is a Tern server. Positions stay queued")
        }
        guard answer.firstCharacter == "{",
              let receipt = try? JSONDecoder().decode(WireReceipt.self, from: Data(answer.body))
        else {
            return ResponseClassifier.notTheServersAnswer(answer, expected: "a Tern server answers a JSON receipt or nothing")
        }
        guard let through = receipt.storedThrough, through < last else { return .delivered }
        let rest: UplinkResult
        if let rejected = receipt.rejected {
            let next = batch.first { $0.sequence > through }?.sequence
            guard rejected.seq == next else {
                let expected = next.map { "the next one, \($0)" } ?? "one in the batch"
                return .retryable(
                    reason: "the server's receipt refuses position \(rejected.seq), not \(expected) (batch \(first)–\(last), "
                        + "stored_through \(through)): not believed; the batch is sent again")
            }
            rest = .rejected(sequence: rejected.seq, reason: "the server refuses position \(rejected.seq): \(rejected.reason ?? "no reason given")")
        } else {
            rest = .retryable(reason: "the server stored the batch only up to sequence \(through)")
        }
        return through < first ? rest : .partial(through: through, rest: rest)
    }
}
