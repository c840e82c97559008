import Foundation
import TernCore

/// What a server running Tern's protocol may answer with a 2xx: how much of the batch it stored.
///
/// `{"stored_through": 1234}`: positions up to and including sequence 1234 are stored (the rest of
/// the batch is sent again later); `{"stored_through": 1233, "rejected": {"seq": 1234, "reason":
/// "lat out of range"}}`: 1234 will never be accepted (the forwarder quarantines it after a few
/// attempts). No body, or no `stored_through`: the whole batch is stored.
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

    /// The outcome of a 2xx whose body is `body` for `batch`.
    static func outcome(body: String, batch: [QueuedPosition]) -> UplinkResult {
        guard let last = batch.last?.sequence, let first = batch.first?.sequence,
              let receipt = try? JSONDecoder().decode(WireReceipt.self, from: Data(body.utf8)),
              let through = receipt.storedThrough, through < last
        else { return .delivered }
        let rest: UplinkResult =
            if let rejected = receipt.rejected {
                .rejected(sequence: rejected.seq, reason: "the server refuses position \(rejected.seq): \(rejected.reason ?? "no reason given")")
            } else {
                .retryable(reason: "the server stored the batch only up to sequence \(through)")
            }
        return through < first ? rest : .partial(through: through, rest: rest)
    }
}
