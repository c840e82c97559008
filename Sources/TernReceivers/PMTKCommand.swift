import TernNMEA

/// A MediaTek PMTK packet (MT3339, Quectel L76X/L70 and other MTK-based receivers).
///
/// Encoded as `$PMTK<type>,<data>*HH\r\n` with the NMEA XOR checksum; see the
/// "MTK NMEA Packet User Manual" (GlobalTop/MediaTek) and the Quectel "L76 Series GNSS Protocol Specification".
public enum PMTKCommand: Sendable, Hashable {
    /// PMTK000: test packet; answered by `$PMTK001,0,3`.
    case test
    /// PMTK101: hot restart (all data kept).
    case hotRestart
    /// PMTK102: warm restart (ephemeris dropped).
    case warmRestart
    /// PMTK103: cold restart (time, position, almanac and ephemeris dropped).
    case coldRestart
    /// PMTK161,0: standby; any byte on the UART wakes the receiver.
    case standby
    /// PMTK220: position fix interval in milliseconds (100...10000).
    case setFixInterval(milliseconds: Int)
    /// PMTK225: normal, periodic, perpetual backup or AlwaysLocate power mode.
    case powerMode(PMTKPowerMode)
    /// PMTK251: UART baud rate (the receiver switches at once and does not reliably acknowledge).
    case setBaudRate(Int)
    /// PMTK314: which NMEA sentences are output, and every how many fixes.
    case setSentenceOutput(SentenceRates)
    /// PMTK314,-1: restores the default sentence output.
    case restoreDefaultSentenceOutput
    /// PMTK605: query the firmware release; answered by `$PMTK705`.
    case queryFirmware
    /// Any packet, given as its address and data without `$` and checksum, e.g. `PMTK605` or `PMTK220,200`.
    case raw(String)

    /// The packet type number (`161` for `$PMTK161,0`), which `$PMTK001` acknowledgements echo.
    public var packetType: Int? {
        let address = body.prefix { $0 != "," }
        guard address.hasPrefix("PMTK") else { return nil }
        return Int(address.dropFirst(4))
    }

    /// Address and data, between `$` and `*`: `PMTK161,0`.
    public var body: String {
        switch self {
        case .test: "PMTK000"
        case .hotRestart: "PMTK101"
        case .warmRestart: "PMTK102"
        case .coldRestart: "PMTK103"
        case .standby: "PMTK161,0"
        case .setFixInterval(let milliseconds): "PMTK220,\(milliseconds)"
        case .powerMode(let mode): (["PMTK225"] + mode.fields).joined(separator: ",")
        case .setBaudRate(let rate): "PMTK251,\(rate)"
        case .setSentenceOutput(let rates): (["PMTK314"] + Self.fields314(rates)).joined(separator: ",")
        case .restoreDefaultSentenceOutput: "PMTK314,-1"
        case .queryFirmware: "PMTK605"
        case .raw(let body): body
        }
    }

    /// The sentence without line ending: `$PMTK161,0*28`.
    public var sentence: String {
        "$" + body + "*" + NMEAChecksum.hex(NMEAChecksum.compute(body.utf8))
    }

    /// The bytes to write: the sentence and CR LF.
    public var bytes: [UInt8] { Array((sentence + "\r\n").utf8) }

    /// PMTK314's 19 fields: GLL, RMC, VTG, GGA, GSA, GSV, GRS, GST, five reserved, MALM, MEPH,
    /// MDGP, MDBG, ZDA, MCHN. Each is "output every N fixes", 0 = off.
    static func fields314(_ rates: SentenceRates) -> [String] {
        let order: [NMEASentenceKind?] =
            [.gll, .rmc, .vtg, .gga, .gsa, .gsv, .grs, .gst]
            + [NMEASentenceKind?](repeating: nil, count: 9) + [.zda, nil]
        return order.map { kind in kind.map { String(rates[$0]) } ?? "0" }
    }
}

/// PMTK225 power modes ("MTK NMEA Packet User Manual", PMTK225; Quectel L76 protocol specification).
public enum PMTKPowerMode: Sendable, Hashable {
    /// `PMTK225,0`: full power.
    case normal
    /// `PMTK225,1,…`: periodic backup (run, then backup for the sleep time).
    case periodicBackup(PMTKPeriod)
    /// `PMTK225,2,…`: periodic standby.
    case periodicStandby(PMTKPeriod)
    /// `PMTK225,4`: perpetual backup; only FORCE_ON (or a power cycle) wakes the receiver.
    case perpetualBackup
    /// `PMTK225,8`: AlwaysLocate, standby between fixes.
    case alwaysLocateStandby
    /// `PMTK225,9`: AlwaysLocate, backup between fixes.
    case alwaysLocateBackup

    var fields: [String] {
        switch self {
        case .normal: ["0"]
        case .periodicBackup(let period): ["1"] + period.fields
        case .periodicStandby(let period): ["2"] + period.fields
        case .perpetualBackup: ["4"]
        case .alwaysLocateStandby: ["8"]
        case .alwaysLocateBackup: ["9"]
        }
    }
}

/// Run and sleep times for the PMTK225 periodic modes, in milliseconds.
public struct PMTKPeriod: Sendable, Hashable {
    public var runMilliseconds: Int
    public var sleepMilliseconds: Int
    /// Used while no fix is found yet.
    public var secondRunMilliseconds: Int
    public var secondSleepMilliseconds: Int

    public init(runMilliseconds: Int, sleepMilliseconds: Int, secondRunMilliseconds: Int, secondSleepMilliseconds: Int)
    {
        self.runMilliseconds = runMilliseconds
        self.sleepMilliseconds = sleepMilliseconds
        self.secondRunMilliseconds = secondRunMilliseconds
        self.secondSleepMilliseconds = secondSleepMilliseconds
    }

    var fields: [String] {
        [runMilliseconds, sleepMilliseconds, secondRunMilliseconds, secondSleepMilliseconds].map(String.init)
    }
}
