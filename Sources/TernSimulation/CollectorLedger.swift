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
    var retryAfter: String? = nil
    /// Close the connection instead of answering (what Traccar does when a value will not decode).
    var closeWithoutAnswer = false
    /// Headers beside Content-Type (application/json unless given here) and Content-Length.
    var headers: [String: String] = [:]
}

/// A way the collector misbehaves for one request (to test the uplinks against a bad server).
public enum CollectorFault: Sendable, Hashable {
    /// Answer with this status (and `Retry-After`), recording nothing.
    case status(Int, retryAfter: String? = nil)
    /// Close the connection without an answer (a reset, or Traccar refusing a value).
    case closeWithoutAnswer
    /// Send the headers and half of the body, then close.
    case closeMidBody
    /// Record the request but answer only after this delay.
    case slow(Duration)
    /// Never answer (the connection stays open until the client gives up).
    case stall
    /// Answer this instead of the server, recording nothing: a redirect (`Location` in `headers`), a
    /// captive portal's page.
    case answer(status: Int, headers: [String: String] = [:], body: String = "")
    /// Store the batch, then answer 200 with this body instead of the collector's (a receipt that
    /// lies, a body of megabytes).
    case storeThenAnswer(body: String)
    /// Store the batch, then send its answer one byte every `interval`.
    case storeThenTrickle(every: Duration)
    /// Store the batch, then close the connection without an answer (a proxy dropping it).
    case storeThenClose
}

/// The collector's bookkeeping, independent of the network: decodes batches (Tern's protocol at
/// `/positions`, Traccar's OsmAnd at `/osmand`) and dedups by id (OsmAnd: by device and time).
struct CollectorLedger: Sendable {
    static let path = "/positions"
    static let osmandPath = "/osmand"

    private(set) var requests = 0
    private(set) var positionsReceived = 0
    private(set) var duplicates = 0
    private(set) var unique: [WirePosition] = []
    private var seen: Set<UUID> = []
    /// When set, every POST is answered with this status and nothing is recorded.
    var failureStatus: Int?

    /// OsmAnd positions seen, by device and time in milliseconds.
    private var seenOsmAnd: Set<String> = []

    mutating func handle(method: String, uri: String, body: Data) -> CollectorReply {
        let parts = uri.split(separator: "?", maxSplits: 1).map(String.init)
        let path = parts.first ?? uri
        if path == Self.osmandPath { return recordOsmAnd(query: parts.count > 1 ? parts[1] : String(decoding: body, as: UTF8.self)) }
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

    /// An OsmAnd request as Traccar takes it: `id`, `timestamp` (ms from 2³¹ on), `lat`, `lon`; an
    /// unknown device (not "tern-*") is a 400, as Traccar answers.
    private mutating func recordOsmAnd(query: String) -> CollectorReply {
        requests += 1
        var params: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            params[kv[0]] = (kv.count > 1 ? kv[1] : "").removingPercentEncoding
        }
        guard let device = params["id"], device.hasPrefix("tern") else { return CollectorReply(status: 400, body: "") }
        guard let stamp = params["timestamp"].flatMap(Int64.init), let lat = params["lat"].flatMap(Double.init),
              let lon = params["lon"].flatMap(Double.init), abs(lat) <= 90, abs(lon) <= 180
        else { return CollectorReply(status: 400, body: "", closeWithoutAnswer: true) }
        let millis = stamp >= Int64(Int32.max) ? stamp : stamp * 1000
        positionsReceived += 1
        if seenOsmAnd.insert("\(device)@\(millis)").inserted {
            let time = Date(timeIntervalSince1970: Double(millis) / 1000)
            let fix = Fix(time: time, coordinate: Coordinate(latitude: lat, longitude: lon))
            unique.append(WirePosition(QueuedPosition(sequence: Int64(unique.count + 1), position: Position(fix: fix))))
        } else {
            duplicates += 1
        }
        return CollectorReply(status: 200, body: "")
    }

    private static func errorBody(_ message: String) -> String {
        let data = (try? JSONEncoder().encode(["error": message])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
