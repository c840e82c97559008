import Foundation

/// What decoders need besides the sentence itself.
public struct NMEADecodingContext: Sendable {
    /// A date near the recording, used to resolve two-digit years. Called once per dated sentence.
    public var referenceDate: @Sendable () -> Date

    public init(referenceDate: @escaping @Sendable () -> Date = { Date() }) {
        self.referenceDate = referenceDate
    }
}

/// A typed NMEA message decoded from one sentence type (GGA, RMC, ...).
public protocol NMEAMessageDecodable: Sendable {
    /// The sentence formatter this type decodes, e.g. `"GGA"`.
    static var sentenceType: String { get }
    init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError)
}

/// A decoded sentence. New sentence types add a case here and a line in `NMEADecoder`.
public enum NMEAMessage: Sendable, Hashable {
    case gga(GGAMessage)
    case rmc(RMCMessage)
    /// A sentence type Tern does not decode (yet), including proprietary ones.
    case unsupported(NMEASentence)
}

/// Decodes framed sentences into typed messages, dispatching on the sentence type.
public struct NMEADecoder: Sendable {
    public var context: NMEADecodingContext

    public init(context: NMEADecodingContext = NMEADecodingContext()) {
        self.context = context
    }

    /// Decodes one sentence; unknown types come back as `.unsupported`, malformed known ones throw.
    public func decode(_ sentence: NMEASentence) throws(NMEADecodingError) -> NMEAMessage {
        guard !sentence.isProprietary else { return .unsupported(sentence) }
        switch sentence.type {
        case GGAMessage.sentenceType: return .gga(try GGAMessage(sentence, context: context))
        case RMCMessage.sentenceType: return .rmc(try RMCMessage(sentence, context: context))
        default: return .unsupported(sentence)
        }
    }
}
