import Foundation
import TernCore

/// Counters kept by `NMEAFixAssembler`.
public struct NMEAFixAssemblerStats: Sendable, Hashable {
    /// Receiver cycles seen (groups of sentences sharing a time of day).
    public var epochs = 0
    public var fixesEmitted = 0
    /// Epochs the receiver itself marked invalid (RMC status `V` or mode `N`, GGA quality 0) or without position.
    public var invalidEpochs = 0
    /// Valid epochs dropped because no date was known (no RMC yet).
    public var undatedEpochs = 0

    public init() {}
}

/// Groups decoded sentences into receiver cycles and turns each valid cycle into one `Fix`.
///
/// Sentences with the same UTC time of day belong to one epoch: GGA gives altitude, quality,
/// satellites and HDOP; RMC gives date, speed and course. An epoch is complete when a sentence
/// with another time arrives (or on `flush()`). A fix needs a date: from the epoch's RMC, or
/// the last RMC's date within the hour (and not across midnight).
public struct NMEAFixAssembler: Sendable {
    /// User equivalent range error, metres: the assumed 1 σ ranging error of a consumer-grade
    /// single-frequency receiver. An assumption, not a measurement: `accuracy = HDOP × UERE`.
    public static let defaultUERE = 4.0

    public let uere: Double
    public private(set) var stats = NMEAFixAssemblerStats()

    private var epoch: Epoch?
    private var lastDate: (date: NMEADate, time: NMEATimeOfDay)?

    private struct Epoch {
        var time: NMEATimeOfDay
        var gga: GGAMessage?
        var rmc: RMCMessage?
    }

    public init(uere: Double = NMEAFixAssembler.defaultUERE) {
        self.uere = uere
    }

    /// Adds one decoded message; returns the fix of the previous epoch when this one starts a new epoch.
    public mutating func add(_ message: NMEAMessage) -> Fix? {
        let time: NMEATimeOfDay
        switch message {
        case let .gga(gga): time = gga.time
        case let .rmc(rmc): time = rmc.time
        case .unsupported: return nil
        }
        var completed: Fix?
        if let epoch, epoch.time != time {
            completed = flush()
        }
        var current = epoch ?? Epoch(time: time)
        switch message {
        case let .gga(gga): current.gga = gga
        case let .rmc(rmc): current.rmc = rmc
        case .unsupported: break
        }
        epoch = current
        return completed
    }

    /// Completes the pending epoch, if any; returns its fix when it was valid and dated.
    public mutating func flush() -> Fix? {
        guard let epoch else { return nil }
        self.epoch = nil
        stats.epochs += 1
        if let rmc = epoch.rmc, let date = rmc.date {
            lastDate = (date, rmc.time)
        }
        let rmcInvalid = epoch.rmc.map { !$0.isValid } ?? false
        let ggaInvalid = epoch.gga.map { $0.quality == .invalid } ?? false
        guard !rmcInvalid, !ggaInvalid, let coordinate = epoch.gga?.coordinate ?? epoch.rmc?.coordinate else {
            stats.invalidEpochs += 1
            return nil
        }
        guard let date = date(for: epoch) else {
            stats.undatedEpochs += 1
            return nil
        }
        let hdop = epoch.gga?.hdop
        stats.fixesEmitted += 1
        return Fix(
            time: date.date(at: epoch.time),
            coordinate: coordinate,
            altitude: epoch.gga?.altitude,
            speed: epoch.rmc?.speed,
            course: epoch.rmc?.course,
            quality: epoch.gga?.quality ?? Self.quality(mode: epoch.rmc?.mode),
            satellites: epoch.gga?.satellites,
            hdop: hdop,
            accuracy: hdop.map { $0 * uere })
    }

    /// How long (ms) the last RMC date is reused for epochs without RMC.
    private static let dateCarryLimit = 3_600_000

    private func date(for epoch: Epoch) -> NMEADate? {
        if let date = epoch.rmc?.date { return date }
        guard let lastDate, lastDate.time <= epoch.time,
            epoch.time.millisecondsSinceMidnight - lastDate.time.millisecondsSinceMidnight < Self.dateCarryLimit
        else { return nil }
        return lastDate.date
    }

    /// Fix quality implied by an RMC mode indicator, for epochs without GGA.
    static func quality(mode: Character?) -> FixQuality {
        switch mode {
        case "D": .dgps
        case "E": .estimated
        case "F": .rtkFloat
        case "R": .rtkFixed
        case "M": .manual
        case "S": .simulation
        case "P": .pps
        default: .gps
        }
    }
}
