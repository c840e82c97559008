import TernCore

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

/// Typed field access for decoders: each accessor names the field in its error.
struct NMEAFieldReader {
    let sentence: NMEASentence

    init(_ sentence: NMEASentence, expecting type: String) throws(NMEADecodingError) {
        guard sentence.type == type else {
            throw .unexpectedType(expected: type, actual: sentence.type)
        }
        self.sentence = sentence
    }

    func invalid(_ name: String, _ index: Int) -> NMEADecodingError {
        .invalidField(sentence: sentence.type, field: name, value: String(sentence.fields[index]))
    }

    func time(_ index: Int) throws(NMEADecodingError) -> NMEATimeOfDay {
        guard let text = sentence.field(index) else {
            throw .missingField(sentence: sentence.type, field: "time")
        }
        guard let time = NMEATimeOfDay(nmea: text) else { throw invalid("time", index) }
        return time
    }

    func double(_ index: Int, _ name: String) throws(NMEADecodingError) -> Double? {
        guard let text = sentence.field(index) else { return nil }
        guard let value = Double(text), value.isFinite else { throw invalid(name, index) }
        return value
    }

    func int(_ index: Int, _ name: String) throws(NMEADecodingError) -> Int? {
        guard let text = sentence.field(index) else { return nil }
        guard let value = Int(text) else { throw invalid(name, index) }
        return value
    }

    /// A latitude/longitude pair from `ddmm.mmm,N,dddmm.mmm,E` starting at `index`; nil when empty.
    func coordinate(_ index: Int) throws(NMEADecodingError) -> Coordinate? {
        guard let latText = sentence.field(index), let lonText = sentence.field(index + 2) else { return nil }
        guard let lat = Self.degrees(latText, hemisphere: sentence.field(index + 1), positive: "N", negative: "S")
        else { throw invalid("latitude", index) }
        guard let lon = Self.degrees(lonText, hemisphere: sentence.field(index + 3), positive: "E", negative: "W")
        else { throw invalid("longitude", index + 2) }
        let coordinate = Coordinate(latitude: lat, longitude: lon)
        guard coordinate.isValid else { throw invalid("latitude", index) }
        return coordinate
    }

    /// Parses `d..dmm.mmmm` with a hemisphere letter into signed decimal degrees.
    static func degrees(
        _ text: Substring, hemisphere: Substring?, positive: Character, negative: Character
    ) -> Double? {
        guard let hemisphere, hemisphere.count == 1, let letter = hemisphere.first,
            letter == positive || letter == negative,
            let dot = text.firstIndex(of: ".") ?? Optional(text.endIndex),
            text.distance(from: text.startIndex, to: dot) >= 3,
            let minutesStart = text.index(dot, offsetBy: -2, limitedBy: text.startIndex),
            let whole = Int(text[..<minutesStart]), whole >= 0,
            let minutes = Double(text[minutesStart...]), minutes >= 0, minutes < 60
        else { return nil }
        let value = Double(whole) + minutes / 60
        return letter == negative ? -value : value
    }
}
