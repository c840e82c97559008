/// A `tern receiver send` request, parsed from its words and turned into commands by a driver.
public enum ReceiverAction: Sendable, Hashable {
    case standby
    case wake
    case backup
    case rate(milliseconds: Int)
    case baud(Int)
    case version
    case sentences(SentenceRates)
    /// A PMTK (or other NMEA) sentence body; `$` and the checksum are added.
    case raw(String)
    case ubx(UBXFrame)

    public static let usage =
        "standby | wake | backup | rate MS | baud RATE | version | sentences RMC,GGA,GSV=5 | raw PMTK605 | ubx CLASS ID [HEXPAYLOAD]"

    /// Parses `["rate", "200"]`, `["raw", "PMTK605"]`, `["ubx", "0A", "04"]`, ….
    public static func parse(_ words: [String]) throws(ReceiverCommandError) -> ReceiverAction {
        guard let name = words.first?.lowercased() else { throw .invalidArgument("no command given; one of: \(usage)") }
        let arguments = Array(words.dropFirst())
        func single() throws(ReceiverCommandError) -> String {
            guard arguments.count == 1 else { throw .invalidArgument("'\(name)' takes one argument; usage: \(usage)") }
            return arguments[0]
        }
        func number() throws(ReceiverCommandError) -> Int {
            let text = try single()
            guard let value = Int(text) else { throw .invalidArgument("'\(name)' needs a number, got '\(text)'") }
            return value
        }
        switch name {
        case "standby", "wake", "backup", "version":
            guard arguments.isEmpty else { throw .invalidArgument("'\(name)' takes no arguments") }
            return [
                "standby": ReceiverAction.standby, "wake": .wake, "backup": .backup, "version": .version,
            ][name] ?? .version
        case "rate": return .rate(milliseconds: try number())
        case "baud": return .baud(try number())
        case "sentences": return .sentences(try SentenceRates.parse(try single()).get())
        case "raw": return .raw(try rawBody(try single()))
        case "ubx": return .ubx(try ubxFrame(arguments))
        default: throw .invalidArgument("unknown command '\(name)'; one of: \(usage)")
        }
    }

    /// Whether the command depends on the chipset (`raw` and `ubx` do not).
    public var needsDriver: Bool {
        switch self {
        case .raw, .ubx: false
        default: true
        }
    }

    public func commands(using driver: any ReceiverDriver) throws(ReceiverCommandError) -> [ReceiverCommand] {
        switch self {
        case .standby: [try driver.standby()]
        case .wake: [try driver.wake()]
        case .backup: [try driver.backup()]
        case .rate(let milliseconds): [try driver.setUpdateRate(milliseconds: milliseconds)]
        case .baud(let rate): [try driver.setBaudRate(rate)]
        case .version: [try driver.queryVersion()]
        case .sentences(let rates): try driver.configureSentences(rates)
        case .raw(let body): [ReceiverCommand(.raw(body), expectation: Self.expectation(forRaw: body))]
        case .ubx(let frame): [ReceiverCommand(frame, expectation: Self.expectation(for: frame))]
        }
    }

    /// `$PMTK605*31` → `PMTK605`: strips `$`, a trailing `*HH` and spaces; rejects `*`, `$` or control characters inside.
    static func rawBody(_ text: String) throws(ReceiverCommandError) -> String {
        var body = Substring(text.trimmingSpaces)
        if body.hasPrefix("$") { body = body.dropFirst() }
        if let star = body.lastIndex(of: "*"), body.distance(from: star, to: body.endIndex) == 3 {
            body = body[..<star]
        }
        guard !body.isEmpty,
            body.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "*") && $0 != UInt8(ascii: "$") })
        else { throw .invalidArgument("raw takes a sentence body such as PMTK605 or PMTK220,1000, got '\(text)'") }
        return String(body)
    }

    /// PMTK4xx/6xx queries are answered by PMTK5xx/7xx; other PMTK packets by PMTK001.
    static func expectation(forRaw body: String) -> ReplyExpectation {
        guard let type = PMTKCommand.raw(body).packetType else { return .nothing }
        if (400..<500).contains(type) || (600..<700).contains(type) {
            return .pmtkReply(packetType: type, type: "MTK\(type + 100)")
        }
        return .pmtkAck(packetType: type)
    }

    /// CFG messages are acknowledged; an empty payload is a poll, answered by the same class and id.
    static func expectation(for frame: UBXFrame) -> ReplyExpectation {
        if frame.messageClass == UBXMessages.Class.cfg {
            return .ubxAck(messageClass: frame.messageClass, messageID: frame.messageID)
        }
        return frame.payload.isEmpty
            ? .ubxFrame(messageClass: frame.messageClass, messageID: frame.messageID) : .nothing
    }

    static func ubxFrame(_ arguments: [String]) throws(ReceiverCommandError) -> UBXFrame {
        guard (2...3).contains(arguments.count), let classBytes = parseHexBytes(arguments[0]), classBytes.count == 1,
            let idBytes = parseHexBytes(arguments[1]), idBytes.count == 1
        else {
            throw .invalidArgument(
                "ubx takes CLASS ID [HEXPAYLOAD] in hex, e.g. 'ubx 0A 04' or 'ubx 06 08 E803 0100 0100'")
        }
        guard let payload = arguments.count == 3 ? parseHexBytes(arguments[2]) : [] else {
            throw .invalidArgument("the UBX payload must be hex bytes, got '\(arguments[2])'")
        }
        return UBXFrame(messageClass: classBytes[0], messageID: idBytes[0], payload: payload)
    }
}
