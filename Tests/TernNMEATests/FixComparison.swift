import Foundation

/// A gpsd-style fix record read back from JSON (the subset `compare_fixes.py` compares).
struct ComparableFix {
    var fields: [String: Double]
    var mode: Int

    static let tolerances: [(key: String, tolerance: Double)] = [
        ("lat", 1e-7), ("lon", 1e-7), ("alt", 0.01), ("speed", 0.01), ("track", 0.01),
    ]

    /// Fixes keyed by time, as `compare_fixes.py` loads them: time set, mode ≥ 2, lat/lon set; last one wins.
    static func load(jsonLines data: Data) throws -> [String: ComparableFix] {
        var fixes: [String: ComparableFix] = [:]
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let time = object["time"] as? String, let mode = object["mode"] as? Int, mode >= 2,
                object["lat"] is Double || object["lat"] is Int, object["lon"] is Double || object["lon"] is Int
            else { continue }
            var fields: [String: Double] = [:]
            for (key, _) in tolerances {
                if let number = object[key] as? NSNumber { fields[key] = number.doubleValue }
            }
            fixes[time] = ComparableFix(fields: fields, mode: mode)
        }
        return fixes
    }
}

/// The outcome of comparing a candidate fix stream with gpsd's, by time (the rules of `compare_fixes.py`).
struct FixComparison {
    var referenceFixes = 0
    var candidateFixes = 0
    var matched = 0
    var missing: [String] = []
    var extra: [String] = []
    var modeDifferences = 0
    /// Per field: values beyond tolerance, values only gpsd has, values only Tern has.
    var mismatches: [String: Int] = [:]
    var referenceOnly: [String: Int] = [:]
    var candidateOnly: [String: Int] = [:]
    var mismatchedTimes: [String: [String]] = [:]

    init() {}

    init(reference: [String: ComparableFix], candidate: [String: ComparableFix]) {
        referenceFixes = reference.count
        candidateFixes = candidate.count
        missing = reference.keys.filter { candidate[$0] == nil }.sorted()
        extra = candidate.keys.filter { reference[$0] == nil }.sorted()
        for (time, expected) in reference {
            guard let actual = candidate[time] else { continue }
            matched += 1
            if expected.mode != actual.mode { modeDifferences += 1 }
            for (key, tolerance) in ComparableFix.tolerances {
                switch (expected.fields[key], actual.fields[key]) {
                case (nil, nil): break
                case (.some, nil): referenceOnly[key, default: 0] += 1
                case (nil, .some): candidateOnly[key, default: 0] += 1
                case let (.some(x), .some(y)):
                    var difference = abs(x - y)
                    if key == "track" { difference = min(difference, 360 - difference) }
                    if difference > tolerance {
                        mismatches[key, default: 0] += 1
                        mismatchedTimes[key, default: []].append(time)
                    }
                }
            }
        }
    }

    static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.referenceFixes += rhs.referenceFixes
        sum.candidateFixes += rhs.candidateFixes
        sum.matched += rhs.matched
        sum.missing += rhs.missing
        sum.extra += rhs.extra
        sum.modeDifferences += rhs.modeDifferences
        sum.mismatches.merge(rhs.mismatches, uniquingKeysWith: +)
        sum.referenceOnly.merge(rhs.referenceOnly, uniquingKeysWith: +)
        sum.candidateOnly.merge(rhs.candidateOnly, uniquingKeysWith: +)
        return sum
    }
}
