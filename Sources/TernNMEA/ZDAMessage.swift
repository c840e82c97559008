import Foundation

/// ZDA, time and date: UTC time of day with a four-digit year.
///
/// `$GPZDA,hhmmss.ss,dd,mm,yyyy,zh,zm*HH`
public struct ZDAMessage: NMEAMessageDecodable, Hashable {
    public static let sentenceType = "ZDA"

    public var talker: String
    public var time: NMEATimeOfDay
    /// Nil when the receiver does not know the date yet (empty fields).
    public var date: NMEADate?
    /// False when `date` fits no week-rollover candidate near a synchronised clock (`NMEADateResolution`).
    public var dateTrusted = true

    public init(_ sentence: NMEASentence, context: NMEADecodingContext) throws(NMEADecodingError) {
        let reader = try NMEAFieldReader(sentence, expecting: Self.sentenceType)
        talker = sentence.talker
        time = try reader.time(0)
        guard let day = try reader.int(1, "day"), let month = try reader.int(2, "month"),
            let year = try reader.int(3, "year")
        else {
            date = nil
            return
        }
        let reference = context.reference()
        let fullYear = year < 100 ? NMEADate.resolve(twoDigitYear: year, reference: reference.date) : year
        guard let parsed = NMEADate(year: fullYear, month: month, day: day) else { throw reader.invalid("date", 1) }
        let resolution = parsed.resolvingWeekRollover(reference)
        date = resolution.date
        dateTrusted = resolution.trusted
    }
}
