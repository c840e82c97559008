import Foundation
import TernCore
import TernNMEA

/// One simulated run: which policy, which receiver, where the sky is missing.
public struct SimulationOptions: Sendable, Hashable {
    public var policy: FixPolicy
    public var receiver: ReceiverModel
    public var seed: UInt64
    public var acquisitionTimeout: Duration
    public var accuracyTarget: Double
    /// Periods without sky (indoors, tunnel), seconds from the trace start: no fix possible.
    public var noSky: [ClosedRange<Double>]
    /// The location filter the accepted fixes pass.
    public var filter: StandardLocationFilter.Options
    /// How stored positions are written together (the gateway's group commit; writes take no time here).
    public var commitWindow = GroupCommit.Window()
    /// Seconds from the scheduler's power-on to the receiver powering, by power-on (from 0; none:
    /// at once). For replaying the timing of a real run, as the cross-check does.
    public var powerOnDelays: [Double] = []
    /// How wrong the fixes are and what the receiver reports about them (`FixErrorModel`).
    public var errorModel: FixErrorModel.Parameters
    /// When Tern restarts (seconds from the trace start): it powers the receiver off, is down for
    /// `restartDowntime` and starts a new scheduler, resuming its `FixScheduler.Memory` when
    /// `remembers` (the receiver keeps its ephemeris on backup power either way).
    public var restarts: [Double]
    public var remembers: Bool

    /// How long a restart keeps Tern down (systemd's RestartSec plus start-up).
    public static let restartDowntime = 10.0

    /// Seconds from the last byte of a cycle on the wire to Tern acting on its fix (the scheduler
    /// switching the receiver off): what the real path takes, measured by `tern-bench latency` (PTY at
    /// 9600 baud → termios → NMEA assembler → gateway → power switch; docs/measurements.md).
    public var deliveryLatency: Double
    /// The p95 docs/measurements.md quotes under "Acting on a fix" (the one place for this figure): `tern-bench
    /// latency --cycles 10`, through the daemon's own wiring and shipped configuration, debug build,
    /// 2 x86_64 cores: 0.57 ms. At milliseconds it is small next to the cycle's transmission (~0.4 s
    /// at 9600 baud); re-measure on the board.
    public static let measuredDeliveryLatency = 0.00057
    /// Where the receiver's epochs (its whole UTC seconds) fall in the schedule's time, seconds in
    /// [0, 1): epochs at `epochPhase` + whole seconds from the trace start. Any phase costs the same
    /// on average (the wait for the next epoch after a time to first fix); 0 by default.
    public var epochPhase: Double = 0

    public init(
        policy: FixPolicy, receiver: ReceiverModel = .mt3339, seed: UInt64 = 1,
        acquisitionTimeout: Duration = FixScheduler.Options.shipped.acquisitionTimeout,
        accuracyTarget: Double = FixScheduler.Options.shipped.accuracyTarget,
        noSky: [ClosedRange<Double>] = [], filter: StandardLocationFilter.Options = .init(),
        restarts: [Double] = [], remembers: Bool = true, deliveryLatency: Double = SimulationOptions.measuredDeliveryLatency
    ) {
        self.deliveryLatency = deliveryLatency
        self.restarts = restarts
        self.remembers = remembers
        self.policy = policy
        self.receiver = receiver
        self.seed = seed
        self.acquisitionTimeout = acquisitionTimeout
        self.accuracyTarget = accuracyTarget
        self.noSky = noSky
        self.filter = filter
        self.errorModel = FixErrorModel.Parameters.forReceiver(receiver)
    }

    /// The scheduler options this run uses (before the core's configuration couples them to the
    /// filter's warm-up).
    public var schedulerOptions: FixScheduler.Options {
        FixScheduler.Options(policy: policy, acquisitionTimeout: acquisitionTimeout, accuracyTarget: accuracyTarget, energy: receiver.energy)
    }

    /// The core's configuration this run uses with `scheduler`: the daemon's, with this run's filter and
    /// commit window.
    public func core(scheduler: FixScheduler.Options) -> GatewayCore.Configuration {
        GatewayCore.Configuration(scheduler: scheduler, filter: filter, commitWindow: commitWindow)
    }
}

/// Runs the gateway's own core (`GatewayCore`: the real `FixScheduler`, `StandardLocationFilter`,
/// freshness, thinning feedback, group commit and stop path, as the daemon's `Gateway` runs them)
/// against a simulated receiver and supply switch moving along `trace`, in virtual time
/// (event-driven: receiver epochs on whole seconds, the core's wake-ups and commit wake-ups); then
/// scores the accepted and the stored track against the ground truth at 1 Hz. This loop only
/// simulates the receiver: every decision is the core's.
///
/// What the real path costs is charged: an epoch's fix reaches the scheduler when its cycle's last
/// byte has left the UART (the MT3339 sentence set of `NMEAWriter.cycle` at the model's baud rate)
/// plus `deliveryLatency`, and the receiver stays powered until then. Each power-on takes the same
/// time to first fix as on the simulated board (`ReceiverModel.ttff(_:powerOn:seed:)`).
public func simulate(trace: Trace, options: SimulationOptions) -> SimulationResult {
    simulate(trace: trace, options: options, scheduler: options.schedulerOptions)
}

/// As `simulate(trace:options:)`, with explicit scheduler options (for tuning).
public func simulate(trace: Trace, options: SimulationOptions, scheduler schedulerOptions: FixScheduler.Options) -> SimulationResult {
    var run = SimulationRun(trace: trace, options: options, scheduler: schedulerOptions)
    run.run()
    return run.result()
}

struct SimulationRun {
    let trace: Trace
    let options: SimulationOptions
    let model: ReceiverModel
    var core: GatewayCore
    var meter: EnergyMeter
    var random: SplitMix64
    /// The receiver's fixes (their own random streams, so that scheduling choices do not shift the noise).
    var fixes: SimulatedFixes
    var receiver = SimulatedReceiver()
    /// The core's requested wake-up, kept as the exact `Duration` it asked for, and its commit wake-up.
    var wake: Duration?
    var commitAt: Duration?
    var now = 0.0
    var accepted: [SimulationResult.AcceptedFix] = []
    /// What the core wrote (after thinning and group commit).
    var stored: [SimulationResult.AcceptedFix] = []
    /// The counters of the cores before the last restart.
    var earlierCounters = GatewayStatus()
    /// The epoch of the receiver's first fix in the run (the end of the cold start after boot).
    var firstFixEpoch: Double?
    var powerLog: [SimulationResult.PowerLogEntry] = []
    var starts = SimulationResult.Starts()
    var powerOns = 0
    /// Restarts still to come, and when the restarted scheduler starts.
    var restarts: [Double]
    var startAt: Double?
    /// Counters of the schedulers before the last restart.
    var earlier = (refreshes: 0, timeouts: 0, keptOn: 0)
    /// Seconds from an epoch to its fix (or no-fix report) reaching the scheduler.
    let cycles: SimulatedCycle
    let noFixDelay: Double

    /// Seconds from the next fix's epoch to its reaching the scheduler.
    private var fixDelay: Double {
        cycles.fixTransmission(noisy: receiver.fixesThisSession < receiver.startUp.noisyFixes) + options.deliveryLatency
    }

    init(trace: Trace, options: SimulationOptions, scheduler: FixScheduler.Options) {
        cycles = SimulatedCycle(model: options.receiver)
        noFixDelay = cycles.noFixTransmission + options.deliveryLatency
        self.trace = trace
        self.options = options
        self.model = options.receiver
        self.core = Self.makeCore(options: options, scheduler: scheduler)
        self.meter = EnergyMeter(energy: options.receiver.energy, standbyCurrent: options.receiver.standbyCurrent)
        self.random = SplitMix64(seed: options.seed)
        self.fixes = SimulatedFixes(model: options.receiver, seed: options.seed, parameters: options.errorModel)
        self.restarts = options.restarts.sorted()
    }

    static func makeCore(options: SimulationOptions, scheduler: FixScheduler.Options) -> GatewayCore {
        GatewayCore(configuration: options.core(scheduler: scheduler))
    }

    mutating func run() {
        let end = trace.duration
        perform(core.start(now: .zero))
        while true {
            let fixAt = receiver.powered ? receiver.nextFixAt.map { $0 + fixDelay } : nil
            let statusAt = receiver.powered ? receiver.nextStatusAt.map { $0 + noFixDelay } : nil
            let restartAt = startAt == nil ? restarts.first : nil
            let next = [fixAt, statusAt, wake?.seconds, commitAt?.seconds, restartAt, startAt].compactMap { $0 }.min()
            guard let next, next <= end else { break }
            now = max(now, next)
            if let restartAt, restartAt <= next {
                restart()
            } else if let at = startAt, at <= next {
                startAt = nil
                perform(core.start(now: .seconds(now)))
            } else if let fixAt, fixAt <= next {
                emitFix()
            } else if let statusAt, statusAt <= next {
                emitNoFixEpoch()
            } else if let at = wake, at.seconds <= next {
                wake = nil
                perform(core.timerFired(now: max(at, .seconds(now))))
            } else if let at = commitAt {
                commitAt = nil
                perform(core.commitTimerFired(now: max(at, .seconds(now))))
            }
        }
        now = end
        stopCore()
        meter.finish(at: end)
    }

    /// The gateway's stop path: what waits is written (thinning's held fix included), then the
    /// receiver is switched off.
    private mutating func stopCore() {
        perform(core.shutdownWrites(now: .seconds(now)))
        perform(core.stop(now: .seconds(now)))
    }

    /// Tern stops (receiver off), and a new core waits to start after the downtime, resuming what the
    /// scheduler had learnt when `remembers` (the daemon saves it at shutdown).
    private mutating func restart() {
        restarts.removeFirst()
        stopCore()
        let scheduler = core.scheduler
        earlier = (earlier.refreshes + scheduler.ephemerisRefreshes, earlier.timeouts + scheduler.timeouts, earlier.keptOn + scheduler.keptOn)
        earlierCounters = earlierCounters.mergingVerdicts(core.counters)
        let memory = core.memory(now: .seconds(now))
        core = Self.makeCore(options: options, scheduler: scheduler.options)
        if options.remembers, let memory { core.remember(memory, downtime: .seconds(SimulationOptions.restartDowntime)) }
        wake = nil
        commitAt = nil
        startAt = now + SimulationOptions.restartDowntime
    }

    /// The receiver's first epoch at or after `t`: its whole seconds, `epochPhase` into the schedule's.
    private func nextEpoch(atOrAfter t: Double) -> Double {
        (t - options.epochPhase).rounded(.up) + options.epochPhase
    }

    private func skyVisible(at t: Double) -> Bool {
        !options.noSky.contains { $0.contains(t) }
    }

    private func noSkyEnd(after t: Double) -> Double {
        options.noSky.filter { $0.contains(t) }.map(\.upperBound).max() ?? t
    }

    /// While acquiring, the receiver reports a no-fix epoch every second with the satellites it hears
    /// (GSV signal strengths): none without sky; under the sky, some after a couple of seconds.
    private mutating func emitNoFixEpoch() {
        guard receiver.fixesThisSession == 0, let poweredAt = receiver.poweredAt, let epoch = receiver.nextStatusAt else {
            receiver.nextStatusAt = nil
            return
        }
        receiver.nextStatusAt = epoch + 1 < (receiver.nextFixAt ?? .infinity) ? epoch + 1 : nil
        let hearing = skyVisible(at: epoch) && epoch - poweredAt >= SimulatedGPS.hearingDelay
        let report = Fix.noFix(time: trace.start.addingTimeInterval(epoch), satellitesHeard: hearing ? SimulatedGPS.satellitesHeard : 0)
        perform(core.fixReceived(report, now: .seconds(now)))
    }

    private mutating func emitFix() {
        guard let epoch = receiver.nextFixAt else { return }
        if !skyVisible(at: epoch) {
            // Lost (or never had) the sky: the next fix comes a hot re-acquisition after it returns.
            let back = noSkyEnd(after: epoch)
            receiver.nextFixAt = nextEpoch(atOrAfter: back + model.ttff(.hot, using: &random))
            receiver.trackingSince = nil
            if receiver.fixesThisSession > 0 { setMeter(.acquiring) }
            return
        }
        if receiver.fixesThisSession == 0 {
            if firstFixEpoch == nil { firstFixEpoch = epoch }
            setMeter(.tracking)
            if receiver.start != .hot { receiver.ephemerisAt = epoch }
        }
        receiver.fixesThisSession += 1
        if let since = receiver.trackingSince {
            if epoch - since >= model.energy.ephemerisRefresh.seconds { receiver.ephemerisAt = epoch }
        } else {
            receiver.trackingSince = epoch
        }
        receiver.nextFixAt = epoch + 1
        let fix = makeFix(at: epoch)
        perform(core.fixReceived(fix, now: .seconds(now)))
    }

    private mutating func makeFix(at epoch: Double) -> Fix {
        fixes.fix(
            time: trace.start.addingTimeInterval(epoch), truth: trace.state(at: epoch),
            number: receiver.fixesThisSession, startUp: receiver.startUp)
    }

    private mutating func setMeter(_ state: EnergyMeter.PowerState, at time: Double? = nil) {
        meter.set(state, at: time ?? now)
        powerLog.append(.init(time: time ?? now, state: state))
    }

    /// Performs the core's actions as the daemon's shell does, on the simulated receiver and switch.
    private mutating func perform(_ actions: [GatewayCore.Action]) {
        var actions = actions[...]
        while let action = actions.popFirst() {
            switch action {
            case .powerOn:
                guard !receiver.powered else { continue }
                powerOns += 1
                let age = receiver.ephemerisAt.map { now - $0 }
                let kind = model.startKind(ephemerisAge: age)
                switch kind {
                case .hot: starts.hot += 1
                case .warm: starts.warm += 1
                case .cold: starts.cold += 1
                }
                receiver.powered = true
                receiver.start = kind
                receiver.fixesThisSession = 0
                receiver.trackingSince = nil
                receiver.startUp = SimulatedFixes.startUp(of: model, powerOn: powerOns - 1, seed: options.seed)
                // Epochs fall on whole seconds: the first at or after the power-on, the first fix at or
                // after a time to first fix later.
                let delays = options.powerOnDelays
                let poweredAt = now + (powerOns - 1 < delays.count ? delays[powerOns - 1] : 0)
                let firstFix = nextEpoch(atOrAfter: poweredAt + model.ttff(kind, powerOn: powerOns - 1, seed: options.seed))
                let firstEpoch = nextEpoch(atOrAfter: poweredAt)
                receiver.nextFixAt = firstFix
                receiver.poweredAt = poweredAt
                receiver.nextStatusAt = firstEpoch < firstFix ? firstEpoch : nil
                setMeter(.acquiring, at: poweredAt)
                core.powerSwitched(on: true, now: .seconds(now))
            case .powerOff:
                guard receiver.powered else { continue }
                receiver.powered = false
                receiver.nextFixAt = nil
                receiver.nextStatusAt = nil
                setMeter(.off)
                core.powerSwitched(on: false, now: .seconds(now))
            case let .wake(at):
                wake = at
            case let .commitWake(at):
                commitAt = at
            case let .write(positions):
                stored += positions.map { acceptedFix($0.fix) }
                actions.append(contentsOf: core.written(EnqueueResult(stored: positions.count), now: .seconds(now)))
            case let .accepted(fix):
                accepted.append(acceptedFix(fix))
            case .saveMemory, .note, .trustedTime:
                break
            }
        }
    }

    private func acceptedFix(_ fix: Fix) -> SimulationResult.AcceptedFix {
        .init(
            time: fix.time.timeIntervalSince(trace.start), latitude: fix.coordinate.latitude,
            longitude: fix.coordinate.longitude, accuracy: fix.accuracy)
    }

    /// The per-second errors `errorSkyM` scores: with sky, from the receiver's first fix of the run.
    private func scored(_ errors: [Double]) -> [Double] {
        let from = firstFixEpoch ?? 0
        return errors.enumerated().filter { Double($0.offset) >= from && skyVisible(at: Double($0.offset)) }.map(\.element)
    }

    mutating func result() -> SimulationResult {
        var r = SimulationResult()
        r.trace = trace.name
        r.receiver = model.name
        r.policy = String(describing: options.policy)
        r.durationS = trace.duration
        r.receiverOnS = meter.onSeconds
        r.energyMJ = meter.totalMillijoules
        r.fixesAccepted = accepted.count
        r.cycles = meter.cycles.count
        r.fixesAttempted = { if case .alwaysOn = options.policy { return accepted.count } else { return powerOns } }()
        r.starts = starts
        let errors = trackErrors(trace: trace, fixes: accepted)
        r.errorM = SimulationResult.ErrorStats(errors)
        r.errorSkyM = SimulationResult.ErrorStats(scored(errors))
        r.energyPerFixMJ = accepted.isEmpty ? 0 : r.energyMJ / Double(accepted.count)
        let e = model.energy
        r.floorMJ = e.voltage * e.acquisitionCurrent * (model.hotTTFFMedian + 0.5 + cycles.fixTransmission(noisy: true) + options.deliveryLatency)
        r.floorRatio = r.floorMJ > 0 ? r.energyPerFixMJ / r.floorMJ : 0
        r.medianCycleMJ = Statistics.median(meter.cycles)
        r.ephemerisRefreshes = earlier.refreshes + core.scheduler.ephemerisRefreshes
        r.timeouts = earlier.timeouts + core.scheduler.timeouts
        r.keptOn = earlier.keptOn + core.scheduler.keptOn
        r.acceptedFixes = accepted
        let all = stored
        r.storedFixes = all
        r.fixesStored = all.count
        let counters = earlierCounters.mergingVerdicts(core.counters)
        r.rejections = counters.rejections
        r.thinned = counters.thinned
        r.reanchors = counters.reanchors
        let storedErrors = trackErrors(trace: trace, fixes: all)
        r.errorStoredSkyM = SimulationResult.ErrorStats(scored(storedErrors))
        r.powerLog = powerLog
        return r
    }
}

/// The simulated receiver's own state (the truth the scheduler only infers).
struct SimulatedReceiver {
    var powered = false
    var start: StartKind = .cold
    /// When the receiver last decoded the ephemeris (seconds); nil: never (cold).
    var ephemerisAt: Double?
    var nextFixAt: Double?
    /// The next no-fix epoch while acquiring (nil once a fix came).
    var nextStatusAt: Double?
    var poweredAt: Double?
    var fixesThisSession = 0
    var trackingSince: Double?
    var startUp = SimulatedFixes.StartUp(noisyFixes: 0, noisyFactor: 1)
}

/// Distance at every whole second (index = seconds since the trace start) between the truth and the
/// track linearly interpolated between accepted fixes (before the first / after the last fix: that
/// fix); empty without fixes.
func trackErrors(trace: Trace, fixes: [SimulationResult.AcceptedFix]) -> [Double] {
    let seconds = Int(trace.duration.rounded(.down))
    guard !fixes.isEmpty, seconds >= 0 else { return [] }
    var errors: [Double] = []
    errors.reserveCapacity(seconds + 1)
    var index = 0
    for s in 0...seconds {
        let t = Double(s)
        while index + 1 < fixes.count, fixes[index + 1].time <= t { index += 1 }
        let a = fixes[index]
        var estimate = Coordinate(latitude: a.latitude, longitude: a.longitude)
        if t > a.time, index + 1 < fixes.count {
            let b = fixes[index + 1]
            let fraction = (t - a.time) / (b.time - a.time)
            estimate = Geodesy.interpolate(estimate, Coordinate(latitude: b.latitude, longitude: b.longitude), fraction: fraction)
        }
        let truth = trace.position(at: trace.start.addingTimeInterval(t))
        errors.append(Geodesy.distance(truth, estimate))
    }
    return errors
}

extension SimulationResult.ErrorStats {
    /// p50, p95 and max of `errors` (all zero when empty).
    init(_ errors: [Double]) {
        self.init()
        guard !errors.isEmpty else { return }
        let sorted = errors.sorted()
        p50 = Statistics.percentile(sorted: sorted, 0.5)
        p95 = Statistics.percentile(sorted: sorted, 0.95)
        max = sorted[sorted.count - 1]
    }
}


/// The bytes of one simulated receiver cycle (the sentences the simulated GPS writes), and the time
/// they take on the wire: how long after its epoch a fix or a no-fix report reaches Tern.
struct SimulatedCycle {
    /// Satellites a simulated fix uses (and lists in view): fewer in the noisy first fixes of a start.
    static func satellites(noisy: Bool) -> Int { noisy ? 5 : 9 }

    private let noisyFixTransmission: Double
    private let steadyFixTransmission: Double
    let noFixTransmission: Double

    init(model: ReceiverModel) {
        let writer = NMEAWriter()
        let time = Date(timeIntervalSince1970: 1_795_219_200)
        func bytes(noisy: Bool) -> Int {
            let satellites = Self.satellites(noisy: noisy)
            let fix = Fix(
                time: time, coordinate: Coordinate(latitude: 45.81234, longitude: 15.97654), altitude: 120.5,
                speed: 12.3, course: 123.45, quality: .gps, satellites: satellites, hdop: 0.85)
            return writer.cycle(for: fix, inView: satellites).joined().utf8.count
        }
        noisyFixTransmission = model.transmission(bytes: bytes(noisy: true))
        steadyFixTransmission = model.transmission(bytes: bytes(noisy: false))
        noFixTransmission = model.transmission(bytes: writer.noFixCycle(at: time, heard: SimulatedGPS.satellitesHeard).joined().utf8.count)
    }

    func fixTransmission(noisy: Bool) -> Double { noisy ? noisyFixTransmission : steadyFixTransmission }
}

extension GatewayStatus {
    /// The filter's verdicts of two cores together (before and after a restart): rejections,
    /// thinning and re-anchors; the other counters are this one's.
    func mergingVerdicts(_ other: GatewayStatus) -> GatewayStatus {
        var sum = self
        sum.rejections.merge(other.rejections, uniquingKeysWith: +)
        sum.thinned.merge(other.thinned, uniquingKeysWith: +)
        sum.reanchors += other.reanchors
        return sum
    }
}
