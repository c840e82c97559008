import TernCore

/// What became of one batch handed to the broker (pure): which of its positions the broker
/// acknowledged, and the outcome they add up to. The forwarder may acknowledge (delete) only a
/// contiguous prefix, so a PUBACK for a later position counts only once the ones before it have theirs.
struct MQTTBatchProgress: Sendable, Hashable {
    /// The positions published, in queue order.
    let sequences: [Int64]
    /// The first position that could not be written as a message: the batch ends before it.
    let rejected: Rejected?
    private var acknowledged: Set<Int64> = []

    struct Rejected: Sendable, Hashable {
        var sequence: Int64
        var reason: String
    }

    init(sequences: [Int64], rejected: Rejected? = nil) {
        self.sequences = sequences
        self.rejected = rejected
    }

    mutating func acknowledge(_ sequence: Int64) {
        if sequences.contains(sequence) { acknowledged.insert(sequence) }
    }

    /// Every published position was acknowledged.
    var isComplete: Bool { acknowledged.count == sequences.count }

    /// The outcome once the batch ends, by its completion or by `failure`.
    func result(ending failure: MQTTFailure?) -> UplinkResult {
        let prefix = sequences.prefix { acknowledged.contains($0) }.count
        let rest: UplinkResult
        if prefix < sequences.count, let failure {
            rest = failure.uplinkResult
        } else if let rejected {
            rest = .rejected(sequence: rejected.sequence, reason: rejected.reason)
        } else if prefix == sequences.count {
            return .delivered
        } else {
            rest = .retryable(reason: "the MQTT upload ended before every position was acknowledged")
        }
        return prefix == 0 ? rest : .partial(through: sequences[prefix - 1], rest: rest)
    }
}
