import Foundation

/// What kind of motion a benchmark input is, so a policy's figures can be told apart per kind: a
/// policy that saves energy on vessels and loses on cars should show it (issue 34).
public enum MotionClass: String, CaseIterable, Sendable {
    case vessel
    case car
    case walkCycle = "walk/cycle"
    case parked
    /// A trace file the directory's manifest does not name.
    case unclassified

    /// The manifest a trace directory may hold: `FILE CLASS` per line (`#` starts a comment), CLASS one
    /// of `vessel`, `car`, `walk/cycle`, `parked`.
    public static let manifestName = "motion-classes.txt"

    /// The classes the manifest in `directory` gives its files (empty without a manifest).
    public static func manifest(in directory: String) throws -> [String: MotionClass] {
        let path = directory + "/" + manifestName
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try parse(text, source: path)
    }

    /// The classes of a manifest's `text` (`source` names it in errors: `PATH:LINE`).
    public static func parse(_ text: String, source: String) throws -> [String: MotionClass] {
        var classes: [String: MotionClass] = [:]
        let named = Self.allCases.filter { $0 != .unclassified }
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: \.isWhitespace).map(String.init)
            if fields.isEmpty { continue }
            guard fields.count == 2, let motion = MotionClass(rawValue: fields[1]), motion != .unclassified else {
                throw ManifestError(
                    description: "\(source):\(number + 1): expected 'FILE CLASS' with CLASS one of "
                        + "\(named.map(\.rawValue).joined(separator: ", ")), got '\(line.trimmingCharacters(in: .whitespaces))'")
            }
            classes[fields[0]] = motion
        }
        return classes
    }

    /// A manifest line that is not `FILE CLASS` with a known class.
    public struct ManifestError: Error, CustomStringConvertible {
        public var description: String
    }
}
