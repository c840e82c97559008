import Foundation
import TernCore

/// What one receiver cycle said so far: the working state of `NMEAFixAssembler`.
struct NMEAEpoch {
    var time: NMEATimeOfDay
    var date: NMEADate?
    /// False when the epoch's own date could not be trusted (`NMEADateResolution`).
    var dateTrusted = true
    /// The last valid position reported in the cycle (GGA, RMC, GNS or GLL).
    var coordinate: Coordinate?
    /// Set by any sentence in which the receiver says it has no fix.
    var invalid = false
    var altitude: Double?
    /// Garmin's PGRMZ altitude: used only when no GGA/GNS of the cycle gave one (gpsd's rule).
    var garminAltitude: Double?
    var geoidSeparation: Double?
    var speed: Double?
    var course: Double?
    var ggaQuality: FixQuality?
    var modeQuality: FixQuality?
    var satellites: Int?
    var hdop: Double?
    var gsaHDOP: Double?
    var pdop: Double?
    var vdop: Double?
    var gsaMode: FixMode?
    /// Satellites used per GSA (keyed by talker and system id: a repeated GSA replaces its
    /// predecessor). A short list searched linearly: a cycle has a few GSAs at most.
    var used: [(key: GSAKey, ids: [Int])] = []
    var gst: GSTMessage?

    struct GSAKey: Equatable {
        var talker: String
        var systemID: Int
    }

    init(time: NMEATimeOfDay) {
        self.time = time
    }

    /// DOPs of 99.99 (or more) are how receivers say "unknown".
    static func dop(_ value: Double?) -> Double? {
        guard let value, value > 0, value < 99.99 else { return nil }
        return value
    }

    mutating func merge(_ message: NMEAMessage) {
        switch message {
        case let .gga(gga):
            ggaQuality = gga.quality
            guard gga.quality != .invalid else {
                invalid = true
                return
            }
            if let position = gga.coordinate { coordinate = position }
            altitude = gga.altitude ?? altitude
            geoidSeparation = gga.geoidSeparation ?? geoidSeparation
            satellites = gga.satellites ?? satellites
            hdop = Self.dop(gga.hdop) ?? hdop
        case let .rmc(rmc):
            if let rmcDate = rmc.date { (date, dateTrusted) = (rmcDate, rmc.dateTrusted) }
            guard rmc.isValid else {
                invalid = true
                return
            }
            if let position = rmc.coordinate { coordinate = position }
            speed = rmc.speed ?? speed
            course = rmc.course ?? course
            if let mode = rmc.mode { modeQuality = FixQuality(modeIndicator: mode.asciiValue) }
        case let .gns(gns):
            guard gns.isValid else {
                invalid = true
                return
            }
            if let position = gns.coordinate { coordinate = position }
            altitude = gns.altitude ?? altitude
            geoidSeparation = gns.geoidSeparation ?? geoidSeparation
            satellites = gns.satellites ?? satellites
            hdop = Self.dop(gns.hdop) ?? hdop
            modeQuality = gns.quality
        case let .gll(gll):
            guard gll.isValid else {
                invalid = true
                return
            }
            if let position = gll.coordinate { coordinate = position }
        case let .gsa(gsa):
            if gsa.mode != .unknown { gsaMode = max(gsaMode ?? .unknown, gsa.mode) }
            pdop = Self.dop(gsa.pdop) ?? pdop
            gsaHDOP = Self.dop(gsa.hdop) ?? gsaHDOP
            vdop = Self.dop(gsa.vdop) ?? vdop
            let key = GSAKey(talker: gsa.talker, systemID: gsa.systemID ?? 0)
            if let index = used.firstIndex(where: { $0.key == key }) {
                used[index].ids = gsa.satellites
            } else {
                used.append((key, gsa.satellites))
            }
        case let .vtg(vtg):
            // gpsd's rule: only with both course and speed, and not in mode N (not valid) or E (dead
            // reckoning); then, like any later sentence, it wins.
            guard let vtgSpeed = vtg.speed, let vtgCourse = vtg.course,
                vtg.mode != UInt8(ascii: "N"), vtg.mode != UInt8(ascii: "E")
            else { return }
            (speed, course) = (vtgSpeed, vtgCourse)
        case let .pgrmz(pgrmz):
            garminAltitude = pgrmz.altitude ?? garminAltitude
        case let .zda(zda):
            if let zdaDate = zda.date { (date, dateTrusted) = (zdaDate, zda.dateTrusted) }
        case let .gst(gst):
            self.gst = gst
        case .gsv, .txt, .unsupported:
            break
        }
    }

    private static let constellations = Constellation.allCases

    /// Satellites used per constellation, from the GSAs (by system id, talker or satellite id).
    var usedByConstellation: [Constellation: Int]? {
        guard !used.isEmpty else { return nil }
        // Counted per constellation in a fixed array first: one dictionary insertion per constellation.
        let all = Self.constellations
        // -1: no GSA for this constellation (no key), else its count (possibly 0).
        var counts = [Int](repeating: -1, count: all.count)
        func add(_ constellation: Constellation, _ count: Int) {
            guard let slot = all.firstIndex(of: constellation) else { return }
            counts[slot] = max(counts[slot], 0) + count
        }
        for (key, ids) in used {
            if let constellation = Constellation(systemID: key.systemID) ?? Constellation(talker: key.talker) {
                add(constellation, ids.count)
            } else {
                for id in ids { add(Constellation(nmeaSatelliteID: id), 1) }
            }
        }
        var result: [Constellation: Int] = [:]
        for slot in all.indices where counts[slot] >= 0 { result[all[slot]] = counts[slot] }
        return result
    }

    /// The 2D/3D mode: the GSA's, else 3D with an altitude and 2D without.
    var mode: FixMode {
        if let gsaMode { return gsaMode }
        return altitude ?? garminAltitude == nil ? .twoD : .threeD
    }

    func fix(time: Date, coordinate: Coordinate, inView: [Constellation: Int], uere: Double) -> Fix {
        let horizontalDOP = hdop ?? gsaHDOP
        var fix = Fix(
            time: time, coordinate: coordinate, altitude: altitude ?? garminAltitude, speed: speed, course: course,
            quality: ggaQuality ?? modeQuality ?? .gps, satellites: satellites ?? used.map(\.ids.count).reduce(nil) {
                ($0 ?? 0) + $1
            },
            hdop: horizontalDOP, accuracy: horizontalDOP.map { $0 * uere })
        fix.mode = mode
        fix.geoidSeparation = geoidSeparation
        fix.pdop = pdop
        fix.vdop = vdop
        fix.usedByConstellation = usedByConstellation
        fix.satellitesInView = inView.isEmpty ? nil : inView.values.reduce(0, +)
        fix.inViewByConstellation = inView.isEmpty ? nil : inView
        if let gst, gst.sigmaLatitude != nil || gst.sigmaLongitude != nil || gst.sigmaAltitude != nil {
            fix.errorEstimate = ErrorEstimate(
                latitude: gst.sigmaLatitude, longitude: gst.sigmaLongitude, altitude: gst.sigmaAltitude)
            if let lat = gst.sigmaLatitude, let lon = gst.sigmaLongitude {
                fix.accuracy = (lat * lat + lon * lon).squareRoot()
            }
        }
        return fix
    }
}

extension FixMode: Comparable {
    public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }
}
