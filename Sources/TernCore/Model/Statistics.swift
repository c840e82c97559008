import Foundation

/// The order statistics every report of Tern uses (the simulator's error figures, the benchmarks'
/// latencies and cycle energies), so that one p95 means one thing everywhere.
public enum Statistics {
    /// The `p` quantile (0…1) of `values`: the value at rank round(p × (n − 1)) of the sorted values
    /// (nearest rank, no interpolation: always a value that occurred). 0 when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double {
        percentile(sorted: values.sorted(), p)
    }

    /// As `percentile(_:_:)`, of values already sorted ascending.
    public static func percentile(sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((min(max(p, 0), 1) * Double(sorted.count - 1)).rounded())
        return sorted[rank]
    }

    /// The median of `values`: the middle value, or the mean of the two middle values of an even
    /// count. 0 when empty.
    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
