import TernCore

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
        .invalidField(sentence: sentence.type, field: name, value: String(sentence.fieldText(index)))
    }

    func time(_ index: Int) throws(NMEADecodingError) -> NMEATimeOfDay {
        guard let time = sentence.withField(index, { NMEATimeOfDay(nmeaBytes: $0) }) else {
            throw .missingField(sentence: sentence.type, field: "time")
        }
        guard let time else { throw invalid("time", index) }
        return time
    }

    /// A time of day, or nil when the field is empty (GLL, GNS and GST of an acquiring receiver).
    func optionalTime(_ index: Int) throws(NMEADecodingError) -> NMEATimeOfDay? {
        guard let time = sentence.withField(index, { NMEATimeOfDay(nmeaBytes: $0) }) else { return nil }
        guard let time else { throw invalid("time", index) }
        return time
    }

    func double(_ index: Int, _ name: String) throws(NMEADecodingError) -> Double? {
        guard let value = sentence.withField(index, { NMEANumber.double($0) }) else { return nil }
        guard let value else { throw invalid(name, index) }
        return value
    }

    func int(_ index: Int, _ name: String) throws(NMEADecodingError) -> Int? {
        guard let value = sentence.withField(index, { NMEANumber.int($0) }) else { return nil }
        guard let value else { throw invalid(name, index) }
        return value
    }

    /// The first character of a one-letter field (status, mode), or nil when empty.
    func letter(_ index: Int) -> UInt8? {
        sentence.firstByte(index)
    }

    /// A latitude/longitude pair from `ddmm.mmm,N,dddmm.mmm,E` starting at `index`; nil when empty.
    func coordinate(_ index: Int) throws(NMEADecodingError) -> Coordinate? {
        guard let latValue = sentence.withField(index, { NMEANumber.double($0) }),
            let lonValue = sentence.withField(index + 2, { NMEANumber.double($0) })
        else { return nil }
        guard let lat = Self.degrees(latValue, hemisphere: sentence.letterField(index + 1), positive: "N", negative: "S"),
            lat <= 90
        else { throw invalid("latitude", index) }
        guard let lon = Self.degrees(lonValue, hemisphere: sentence.letterField(index + 3), positive: "E", negative: "W"),
            lon <= 180
        else { throw invalid("longitude", index + 2) }
        let coordinate = Coordinate(latitude: lat, longitude: lon)
        guard coordinate.isValid else { throw invalid("latitude", index) }
        return coordinate
    }

    /// Parses `d..dmm.mmmm` with a hemisphere letter into signed decimal degrees.
    ///
    /// Same arithmetic as gpsd (`degrees = trunc(v / 100)`, `minutes = v - 100 × degrees`), so
    /// positions agree with it to the last printed digit.
    static func degrees(
        _ text: Substring, hemisphere: Substring?, positive: Unicode.Scalar, negative: Unicode.Scalar
    ) -> Double? {
        let letter = hemisphere.flatMap { $0.utf8.count == 1 ? $0.utf8.first : nil }
        return degrees(NMEANumber.double(text), hemisphere: letter, positive: positive, negative: negative)
    }

    /// `degrees` from the parsed number (nil: not a number) and the one-letter hemisphere field
    /// (nil: absent, empty or longer than one letter).
    static func degrees(
        _ number: Double?, hemisphere letter: UInt8?, positive: Unicode.Scalar, negative: Unicode.Scalar
    ) -> Double? {
        guard let letter, letter == UInt8(ascii: positive) || letter == UInt8(ascii: negative),
            let value = number, value >= 0
        else { return nil }
        let whole = (value / 100).rounded(.towardZero)
        let minutes = value - whole * 100
        guard minutes < 60 else { return nil }
        let degrees = whole + minutes / 60
        return letter == UInt8(ascii: negative) ? -degrees : degrees
    }
}

/// Number parsing straight from a field's UTF-8 bytes (no Foundation, no C string copies).
enum NMEANumber {
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// `[+-]digits[.digits]`; nil for anything else (exponents, junk, no digits).
    static func double(_ text: Substring) -> Double? {
        double(bytes: text.utf8)
    }

    static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        double(bytes: bytes)
    }

    static func double(bytes text: some Sequence<UInt8>) -> Double? {
        var mantissa: UInt64 = 0
        var significant = 0
        var fractionDigits = 0
        var droppedIntegerDigits = 0
        var negative = false
        var seenDigit = false
        var seenDot = false
        var index = 0
        for byte in text {
            defer { index += 1 }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                seenDigit = true
                if significant < 18 {
                    mantissa = mantissa &* 10 &+ UInt64(byte &- 48)
                    if mantissa != 0 { significant += 1 }
                    if seenDot { fractionDigits += 1 }
                } else if !seenDot {
                    droppedIntegerDigits += 1
                }
            case UInt8(ascii: "."):
                guard !seenDot else { return nil }
                seenDot = true
            case UInt8(ascii: "-"), UInt8(ascii: "+"):
                guard index == 0 else { return nil }
                negative = byte == UInt8(ascii: "-")
            default:
                return nil
            }
        }
        guard seenDigit, fractionDigits < powersOfTen.count, droppedIntegerDigits < powersOfTen.count else {
            return nil
        }
        var value = Double(mantissa)
        if fractionDigits > 0 { value /= powersOfTen[fractionDigits] }
        if droppedIntegerDigits > 0 { value *= powersOfTen[droppedIntegerDigits] }
        return negative ? -value : value
    }

    /// `[+-]digits`; nil for anything else or on overflow.
    static func int(_ text: Substring) -> Int? {
        int(bytes: text.utf8)
    }

    static func int(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        int(bytes: bytes)
    }

    static func int(bytes text: some Sequence<UInt8>) -> Int? {
        var value = 0
        var negative = false
        var seenDigit = false
        var index = 0
        for byte in text {
            defer { index += 1 }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                seenDigit = true
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = product.addingReportingOverflow(Int(byte - 48))
                guard !overflow, !carry else { return nil }
                value = sum
            case UInt8(ascii: "-"), UInt8(ascii: "+"):
                guard index == 0 else { return nil }
                negative = byte == UInt8(ascii: "-")
            default:
                return nil
            }
        }
        guard seenDigit else { return nil }
        return negative ? -value : value
    }
}
