import Foundation

/// The default filter: drops fixes that are invalid, dated by a receiver clock a synchronised system
/// clock contradicts, too inaccurate, out of sequence, duplicated, or that imply an impossible jump
/// from the last accepted fix. A rejected fix never becomes the reference for later ones.
public struct StandardLocationFilter: LocationFilter {
    public struct Options: Sendable, Hashable {
        /// Fixes whose accuracy estimate is worse than this are rejected, metres.
        public var maxAccuracy: Double
        /// Fastest plausible speed between two accepted fixes, m/s (the default allows a car on a motorway).
        public var maxSpeed: Double
        /// Jumps shorter than this are never called implausible (covers fix noise), metres.
        public var jumpTolerance: Double

        public init(maxAccuracy: Double = 50, maxSpeed: Double = 70, jumpTolerance: Double = 100) {
            self.maxAccuracy = maxAccuracy
            self.maxSpeed = maxSpeed
            self.jumpTolerance = jumpTolerance
        }
    }

    public let options: Options
    public private(set) var lastAccepted: Fix?

    public init(options: Options = Options(), lastAccepted: Fix? = nil) {
        self.options = options
        self.lastAccepted = lastAccepted
    }

    public mutating func evaluate(_ fix: Fix) -> FilterDecision {
        if let reason = rejection(of: fix) { return .reject(reason) }
        lastAccepted = fix
        return .accept(fix)
    }

    private func rejection(of fix: Fix) -> RejectionReason? {
        guard fix.quality.isUsable else { return .noFix }
        guard fix.coordinate.isValid else { return .invalidCoordinate }
        guard !fix.timeUntrusted else { return .untrustedTime }
        if let accuracy = fix.accuracy, accuracy > options.maxAccuracy {
            return .poorAccuracy(metres: accuracy, limit: options.maxAccuracy)
        }
        guard let last = lastAccepted else { return nil }
        if fix.time == last.time { return .duplicate }
        if fix.time < last.time { return .outOfSequence }
        let metres = Geodesy.distance(last.coordinate, fix.coordinate)
        let seconds = fix.time.timeIntervalSince(last.time)
        let allowed = options.jumpTolerance + options.maxSpeed * seconds
        if metres > allowed {
            return .implausibleJump(metresPerSecond: metres / seconds, limit: options.maxSpeed)
        }
        return nil
    }
}
