import Foundation
import TernCore

/// What the collector has seen so far.
public struct CollectorSnapshot: Sendable, Hashable {
    /// Every POST to the positions path, including those answered with an error.
    public var requests: Int
    /// Positions received in accepted batches, duplicates included.
    public var positionsReceived: Int
    /// Positions whose id had already been received.
    public var duplicates: Int
    /// Each distinct position once, in order of first arrival.
    public var unique: [WirePosition]
    /// Whether the collector is listening.
    public var isOnline: Bool

    public init(requests: Int, positionsReceived: Int, duplicates: Int, unique: [WirePosition], isOnline: Bool) {
        self.requests = requests
        self.positionsReceived = positionsReceived
        self.duplicates = duplicates
        self.unique = unique
        self.isOnline = isOnline
    }
}

/// An HTTP answer: status and JSON body.
struct CollectorReply: Sendable, Equatable {
    var status: Int
    var body: String
}

/// The collector's bookkeeping, independent of the network: decodes batches and dedups by id.
struct CollectorLedger: Sendable {
    static let path = "/positions"

    private(set) var requests = 0
    private(set) var positionsReceived = 0
    private(set) var duplicates = 0
    private(set) var unique: [WirePosition] = []
    private var seen: Set<UUID> = []
    /// When set, every POST is answered with this status and nothing is recorded.
    var failureStatus: Int?

    mutating func handle(method: String, uri: String, body: Data) -> CollectorReply {
        let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
        guard path == Self.path else { return CollectorReply(status: 404, body: #"{"error":"not found"}"#) }
        guard method == "POST" else { return CollectorReply(status: 405, body: #"{"error":"use POST"}"#) }
        requests += 1
        if let failureStatus {
            return CollectorReply(status: failureStatus, body: #"{"error":"simulated failure"}"#)
        }
        let batch: WireBatch
        do {
            batch = try WireBatch.decoder().decode(WireBatch.self, from: body)
        } catch {
            return CollectorReply(status: 400, body: Self.errorBody("malformed batch: \(error)"))
        }
        return record(batch)
    }

    private mutating func record(_ batch: WireBatch) -> CollectorReply {
        var accepted = 0
        var repeated = 0
        for position in batch.positions {
            if seen.insert(position.id).inserted {
                unique.append(position)
                accepted += 1
            } else {
                repeated += 1
            }
        }
        positionsReceived += batch.positions.count
        duplicates += repeated
        return CollectorReply(status: 200, body: #"{"accepted":\#(accepted),"duplicates":\#(repeated)}"#)
    }

    private static func errorBody(_ message: String) -> String {
        let data = (try? JSONEncoder().encode(["error": message])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
