/// The types of the scheduler that decides when the receiver is powered: its policies and the
/// receiver's electrical facts, shared by the pure state machine (`FixScheduler`), `GatewayCore`
/// (which drives it: `.start`, `.fixReceived` for every fix while powered, the filter's verdict on
/// each `.deliver` as `.delivered`, `.timerFired` at each wake-up, `.stop`) and the simulator.
///
/// Time is a `Duration` since an arbitrary origin (the shell's start), as in the other state machines.
public enum FixPolicy: Sendable, Hashable {
    /// Receiver always on; every fix is delivered.
    case alwaysOn
    /// The naive duty cycle: power on, deliver the first valid fix, power off, every `interval`.
    case fixed(interval: Duration)
    /// Tern's policy: keep the interpolated track within `errorBudget` metres for as little energy as
    /// possible; intervals between `minInterval` and `maxInterval`.
    case adaptive(errorBudget: Double, minInterval: Duration, maxInterval: Duration)

    /// The policy the daemon ships with (an empty `[scheduler]` table): adaptive, a 30 m budget,
    /// fixes 5 s to 15 min apart.
    public static let shipped = FixPolicy.adaptive(
        errorBudget: shippedErrorBudget, minInterval: shippedMinInterval, maxInterval: shippedMaxInterval)
    public static let shippedErrorBudget = 30.0
    public static let shippedMinInterval = Duration.seconds(5)
    public static let shippedMaxInterval = Duration.seconds(900)
}

/// Electrical facts the scheduler needs for its break-even and refresh decisions (from the
/// receiver's datasheet; see `ReceiverModel` in TernSimulation for the cited values).
public struct ReceiverEnergy: Sendable, Hashable, Codable {
    /// Supply voltage, volts.
    public var voltage: Double
    /// Current while acquiring and while tracking, milliamperes.
    public var acquisitionCurrent: Double
    public var trackingCurrent: Double
    /// Current while off (backup supply kept), milliamperes.
    public var offCurrent: Double
    /// Extra current right after power-on, milliamperes, for `inrushDuration`.
    public var inrushCurrent: Double
    public var inrushDuration: Duration
    /// Median time to first fix with valid ephemeris (hot start).
    public var hotStartTTFF: Duration
    /// Ephemeris older than this needs a warm start.
    public var hotStartWindow: Duration
    /// Continuous tracking needed to refresh the ephemeris.
    public var ephemerisRefresh: Duration
    /// Typical time to first fix with stale ephemeris (warm start).
    public var warmStartTTFF: Duration

    public init(
        voltage: Double, acquisitionCurrent: Double, trackingCurrent: Double, offCurrent: Double,
        inrushCurrent: Double, inrushDuration: Duration, hotStartTTFF: Duration,
        hotStartWindow: Duration = .seconds(7200), ephemerisRefresh: Duration = .seconds(30),
        warmStartTTFF: Duration = .seconds(33)
    ) {
        self.voltage = voltage
        self.acquisitionCurrent = acquisitionCurrent
        self.trackingCurrent = trackingCurrent
        self.offCurrent = offCurrent
        self.inrushCurrent = inrushCurrent
        self.inrushDuration = inrushDuration
        self.hotStartTTFF = hotStartTTFF
        self.hotStartWindow = hotStartWindow
        self.ephemerisRefresh = ephemerisRefresh
        self.warmStartTTFF = warmStartTTFF
    }

    /// MediaTek MT3339 (Adafruit Ultimate GPS): 3.3 V, 25 mA acquisition, 20 mA tracking, 7 µA backup,
    /// ~40 mA inrush for ~1 s, hot start median 1.5 s (Adafruit/GlobalTop PA1616S datasheet).
    public static let mt3339 = ReceiverEnergy(
        voltage: 3.3, acquisitionCurrent: 25, trackingCurrent: 20, offCurrent: 0.007,
        inrushCurrent: 40, inrushDuration: .seconds(1), hotStartTTFF: .milliseconds(1500),
        warmStartTTFF: .seconds(33))

    /// u-blox M8 (GPS+GLONASS): 3.0 V, 32 mA acquisition, 29 mA tracking, 15 µA backup,
    /// hot start median 1.5 s (u-blox M8 data sheet, UBX-15031086).
    public static let ubloxM8 = ReceiverEnergy(
        voltage: 3.0, acquisitionCurrent: 32, trackingCurrent: 29, offCurrent: 0.015,
        inrushCurrent: 40, inrushDuration: .seconds(1), hotStartTTFF: .milliseconds(1500),
        warmStartTTFF: .seconds(26))
}

public enum FixSchedulerEvent: Sendable, Hashable {
    case start(now: Duration)
    /// A fix the receiver reported while powered (valid or not).
    case fixReceived(Fix, now: Duration)
    /// The verdict of the location filter on the fix last delivered.
    case delivered(accepted: Bool, now: Duration)
    case timerFired(now: Duration)
    case stop
}

public enum FixSchedulerAction: Sendable, Hashable {
    case powerOn
    case powerOff
    /// Deliver `.timerFired` at this time (replaces any earlier request).
    case wake(at: Duration)
    /// This fix is the position for now: run the filter on it and report `.delivered`.
    case deliver(Fix)
    /// An event the state could not meet (a programming error in the shell or the scheduler):
    /// nothing changed; log it.
    case invalidEvent(String)
}
