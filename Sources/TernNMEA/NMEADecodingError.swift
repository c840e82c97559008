/// Why a sentence could not be decoded.
public enum NMEADecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The decoder was given a sentence of another type.
    case unexpectedType(expected: String, actual: String)
    case missingField(sentence: String, field: String)
    case invalidField(sentence: String, field: String, value: String)

    public var description: String {
        switch self {
        case let .unexpectedType(expected, actual): "expected a \(expected) sentence, got \(actual)"
        case let .missingField(sentence, field): "\(sentence): missing \(field)"
        case let .invalidField(sentence, field, value): "\(sentence): invalid \(field) '\(value)'"
        }
    }
}
