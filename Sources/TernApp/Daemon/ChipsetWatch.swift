import Logging
import Synchronization
import TernNMEA
import TernReceivers

/// Identifies the receiver from what it says (`$GPTXT`, `$PMTK…`, …) and logs it once it is known;
/// a configured chipset that disagrees with the evidence is worth a warning.
final class ChipsetWatch: Sendable {
    private let configured: String
    private let logger: Logger
    private let detector = Mutex((ChipsetDetector(), reported: Chipset.unknown))

    init(configured: String, logger: Logger) {
        self.configured = configured
        self.logger = logger
    }

    /// What the receiver has shown itself to be so far.
    var chipset: Chipset { detector.withLock { $0.0.chipset } }

    /// The driver in use: the configured one, or the detected one with `auto`.
    var driver: any ReceiverDriver {
        ReceiverDrivers.named(configured) ?? chipset.driver
    }

    func observe(_ sentence: NMEASentence) {
        let (detected, isNew) = detector.withLock { state -> (Chipset, Bool) in
            let detected = state.0.observe(.nmea(sentence))
            defer { state.reported = detected }
            return (detected, detected != state.reported)
        }
        guard isNew, detected != .unknown else { return }
        logger.notice("receiver identified", metadata: ["chipset": "\(detected.summary)", "driver": "\(detected.driver.chipset)"])
        if let wanted = ReceiverDrivers.named(configured), wanted.chipset != detected.driver.chipset {
            logger.warning(
                "receiver.chipset disagrees with what the receiver says",
                metadata: ["configured": "\(configured)", "detected": "\(detected.summary)"])
        }
    }
}
