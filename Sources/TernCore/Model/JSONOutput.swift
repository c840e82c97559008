import Foundation

/// The JSON every report of Tern prints or writes (`tern status`, `doctor`, `replay`, `queue`, the
/// demo's summary, the control socket, the benchmarks): keys sorted, so that the output is stable
/// to diff and to test. The wire format to servers is `WireFormat`'s, not this.
public enum JSONOutput {
    public enum Dates: Sendable {
        /// Foundation's default (seconds since 2001): reports without dates.
        case deferred
        /// ISO 8601 (`2026-11-29T13:48:05Z`).
        case iso8601
        /// Tern's wire time (`WireTime.format`: milliseconds, UTC).
        case wire
    }

    /// An encoder for a report: pretty-printed for people (one line for a log or a socket otherwise),
    /// snake_case keys where the report's own keys are Swift's.
    public static func encoder(pretty: Bool = true, snakeCaseKeys: Bool = false, dates: Dates = .deferred) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        if snakeCaseKeys { encoder.keyEncodingStrategy = .convertToSnakeCase }
        switch dates {
        case .deferred: break
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        case .wire:
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(WireTime.format(date))
            }
        }
        return encoder
    }

    /// A dictionary of plain values (the benchmarks' reports), pretty-printed with sorted keys.
    public static func data(_ object: Any, pretty: Bool = true) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys])
    }
}
