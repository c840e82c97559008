/// The value of `series` (its name with labels, as rendered) in Prometheus' text format, nil when absent.
public func prometheusValue(_ text: String, _ series: String) -> Double? {
    text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
}
