/// The standard NMEA sentences a receiver can be told to output.
public enum NMEASentenceKind: String, Sendable, Hashable, CaseIterable {
    case gga = "GGA"
    case gll = "GLL"
    case gsa = "GSA"
    case gsv = "GSV"
    case rmc = "RMC"
    case vtg = "VTG"
    case grs = "GRS"
    case gst = "GST"
    case zda = "ZDA"
}

/// Output rate per sentence: every N fixes, 0 (or absent) = off.
public struct SentenceRates: Sendable, Hashable {
    public var rates: [NMEASentenceKind: Int]

    public init(_ rates: [NMEASentenceKind: Int] = [:]) {
        self.rates = rates
    }

    /// Every fix for each listed sentence; all others off.
    public init(every kinds: [NMEASentenceKind]) {
        self.rates = Dictionary(kinds.map { ($0, 1) }, uniquingKeysWith: { a, _ in a })
    }

    public subscript(kind: NMEASentenceKind) -> Int {
        rates[kind] ?? 0
    }

    /// Parses `RMC,GGA,GSV=5` (case-insensitive; a bare name means every fix).
    public static func parse(_ text: String) -> Result<SentenceRates, ReceiverCommandError> {
        var rates: [NMEASentenceKind: Int] = [:]
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard let name = parts.first, let kind = NMEASentenceKind(rawValue: name.uppercased()) else {
                return .failure(
                    .invalidArgument(
                        "unknown sentence '\(item)': expected some of "
                            + NMEASentenceKind.allCases.map(\.rawValue).joined(separator: ", ")))
            }
            let rate = parts.count == 2 ? Int(parts[1]) : 1
            guard let rate, (0...5).contains(rate) else {
                return .failure(.invalidArgument("bad rate in '\(item)': expected NAME=0…5 (every N fixes)"))
            }
            rates[kind] = rate
        }
        guard !rates.isEmpty else { return .failure(.invalidArgument("no sentences given, e.g. RMC,GGA,GSV=5")) }
        return .success(SentenceRates(rates))
    }
}
