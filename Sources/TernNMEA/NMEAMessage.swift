import Foundation

/// What decoders need besides the sentence itself.
public struct NMEADecodingContext: Sendable {
    /// The default reference date: about when this version of Tern was built.
    /// **Update at each release.** Receivers never report dates before their own manufacture,
    /// so a date more than a year before this one is a GPS week-rollover victim.
    public static let buildReferenceDate = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    /// What is known of today's date, used to resolve two-digit years and GPS week rollover.
    /// Called once per dated sentence.
    public var reference: @Sendable () -> NMEADateReference

    public init(reference: @escaping @Sendable () -> NMEADateReference) {
        self.reference = reference
    }

    /// A context whose reference date is a lower bound on the recording's date (at or before it).
    public init(referenceDate: @escaping @Sendable () -> Date = { NMEADecodingContext.buildReferenceDate }) {
        self.reference = { .notBefore(referenceDate()) }
    }

    /// A context with a fixed lower-bound reference date (e.g. a log's recording date).
    public init(reference: Date) {
        self.reference = { .notBefore(reference) }
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
    case gns(GNSMessage)
    case gll(GLLMessage)
    case gsa(GSAMessage)
    case gsv(GSVMessage)
    case vtg(VTGMessage)
    case zda(ZDAMessage)
    case gst(GSTMessage)
    case txt(TXTMessage)
    /// Garmin's proprietary altitude (`$PGRMZ`).
    case pgrmz(PGRMZMessage)
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
        guard !sentence.isProprietary else {
            switch sentence.type {
            case PGRMZMessage.sentenceType: return .pgrmz(try PGRMZMessage(sentence, context: context))
            default: return .unsupported(sentence)
            }
        }
        switch sentence.type {
        case GGAMessage.sentenceType: return .gga(try GGAMessage(sentence, context: context))
        case RMCMessage.sentenceType: return .rmc(try RMCMessage(sentence, context: context))
        case GSAMessage.sentenceType: return .gsa(try GSAMessage(sentence, context: context))
        case GSVMessage.sentenceType: return .gsv(try GSVMessage(sentence, context: context))
        case VTGMessage.sentenceType: return .vtg(try VTGMessage(sentence, context: context))
        case GLLMessage.sentenceType: return .gll(try GLLMessage(sentence, context: context))
        case GNSMessage.sentenceType: return .gns(try GNSMessage(sentence, context: context))
        case ZDAMessage.sentenceType: return .zda(try ZDAMessage(sentence, context: context))
        case GSTMessage.sentenceType: return .gst(try GSTMessage(sentence, context: context))
        case TXTMessage.sentenceType: return .txt(try TXTMessage(sentence, context: context))
        default: return .unsupported(sentence)
        }
    }
}
