/// TXT, a text message from the receiver (firmware banner, antenna status, ...).
///
/// `$GPTXT,01,01,02,ANTSTATUS=OK*3B`
public struct TXTMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "TXT"

    public var talker: String
    /// Message type: 0 error, 1 warning, 2 notice, 7 user (u-blox).
    public var kind: Int?
    public var text: String

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        kind = try reader.int(2, "type")
        text = sentence.joinedFields(from: 3)
    }
}
