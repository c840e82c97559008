import Logging
import TernCore

/// A serial port that stays open: when the device goes away (hang-up, `EIO`, end of file) or
/// cannot be opened, it reports the receiver as gone and reopens it with backoff
/// (`ReconnectStateMachine`), so reads simply resume when the device comes back.
///
/// `read` and `write` wait across outages and never throw `.disconnected`: only `.closed` (after
/// `close()`), `CancellationError`, or a non-link error such as `.unsupportedBaudRate`.
/// The device is first opened on the first read or write.
public actor ReconnectingSerialPort: SerialPort, BaudRateConfigurable, LinkStateReporting {
    /// Opens a device at a baud rate; throws when it cannot.
    public typealias Opener = @Sendable (_ path: String, _ baudRate: Int) throws -> any SerialPort

    public nonisolated let path: String
    public private(set) var baudRate: Int
    private let opener: Opener
    private let logger: Logger
    private let now: @Sendable () -> Duration
    private let sleepUntil: @Sendable (Duration) async throws -> Void
    private let broadcast = LinkStateBroadcast(.connecting)
    private var machine: ReconnectStateMachine
    private var port: (any SerialPort)?
    /// Bumped on every open, so a failure seen on an old port does not drop a new one.
    private var generation = 0
    private var wakeAt: Duration?
    private var sleepers: [Int: Task<Void, any Error>] = [:]
    private var nextSleeper = 0
    private var isClosed = false

    public init(
        path: String, baudRate: Int, clock: some Clock<Duration> = ContinuousClock(),
        options: ReconnectStateMachine.Options = .init(), logger: Logger,
        opener: @escaping Opener = { path, baud in try TermiosSerialPort.open(path: path, baudRate: baud) }
    ) {
        self.path = path
        self.baudRate = baudRate
        self.opener = opener
        self.logger = logger
        self.machine = ReconnectStateMachine(options: options)
        let origin = clock.now
        self.now = { origin.duration(to: clock.now) }
        self.sleepUntil = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    public nonisolated var linkState: ReceiverLinkState { broadcast.current }

    public nonisolated func linkStates() -> AsyncStream<ReceiverLinkState> { broadcast.stream() }

    public nonisolated func observeLinkState(_ observer: @escaping @Sendable (ReceiverLinkState) -> Void) {
        broadcast.observe(observer)
    }

    public func read(maxCount: Int) async throws -> [UInt8] {
        while true {
            let (port, opened) = try await connectedPort()
            do {
                return try await port.read(maxCount: maxCount)
            } catch let error as SerialPortError {
                try await handle(error, generation: opened)
            }
        }
    }

    /// Writes all bytes; a write cut short by an outage is sent again, whole, after reconnecting.
    public func write(_ bytes: [UInt8]) async throws {
        while true {
            let (port, opened) = try await connectedPort()
            do {
                return try await port.write(bytes)
            } catch let error as SerialPortError {
                try await handle(error, generation: opened)
            }
        }
    }

    /// Uses `baudRate` from now on: on the open device (if it can change rates) and on every reopen.
    public func setBaudRate(_ baudRate: Int) async throws {
        guard TermiosSerialPort.supportedBaudRates[baudRate] != nil else {
            throw SerialPortError.unsupportedBaudRate(baudRate)
        }
        self.baudRate = baudRate
        guard let configurable = port as? any BaudRateConfigurable else { return }
        let opened = generation
        do {
            try await configurable.setBaudRate(baudRate)
        } catch let error as SerialPortError {
            try await handle(error, generation: opened)
        }
    }

    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        _ = machine.handle(.stop)
        for sleeper in sleepers.values { sleeper.cancel() }
        let open = port
        port = nil
        await open?.close()
        broadcast.finish()
    }

    /// The open device, opening it or waiting out the backoff as the state machine says.
    private func connectedPort() async throws -> (any SerialPort, Int) {
        while true {
            guard !isClosed else { throw SerialPortError.closed }
            try Task.checkCancellation()
            if let port { return (port, generation) }
            if machine.state == .idle {
                perform(machine.handle(.start))
            } else if let wakeAt {
                do {
                    try await sleep(until: wakeAt)
                } catch {
                    if isClosed { throw SerialPortError.closed }
                    throw error
                }
                perform(machine.handle(.timerFired(now: now())))
            } else {
                throw SerialPortError.closed
            }
        }
    }

    /// A link failure on the port opened as `generation` drops it and starts reconnecting; other errors pass.
    private func handle(_ error: SerialPortError, generation opened: Int) async throws {
        if isClosed { throw SerialPortError.closed }
        switch error {
        case .disconnected, .io, .closed:
            guard opened == generation, let lost = port else { return }
            port = nil
            logger.warning("GPS serial device lost", metadata: ["device": "\(path)", "error": "\(error)"])
            perform(machine.handle(.disconnected(reason: Self.reason(error), now: now())))
            await lost.close()
        default:
            throw error
        }
    }

    private func perform(_ actions: [ReconnectStateMachine.Action]) {
        for action in actions {
            switch action {
            case .open:
                do {
                    port = try opener(path, baudRate)
                    generation += 1
                    wakeAt = nil
                    perform(machine.handle(.opened))
                } catch {
                    perform(machine.handle(.openFailed(reason: Self.reason(error), now: now())))
                }
            case let .wake(at):
                wakeAt = at
            case let .report(linkState):
                if broadcast.update(linkState) {
                    logger.notice("GPS link: \(linkState)", metadata: ["device": "\(path)"])
                }
            case let .invalidEvent(what):
                logger.error("programming error, please report it: the reconnect logic ignored an event its state cannot meet", metadata: ["event": "\(what)"])
            }
        }
    }

    /// Sleeps until `deadline` (since the clock origin); `close()` cuts it short.
    private func sleep(until deadline: Duration) async throws {
        let id = nextSleeper
        nextSleeper += 1
        let sleeper = Task { [sleepUntil] in try await sleepUntil(deadline) }
        sleepers[id] = sleeper
        defer { sleepers[id] = nil }
        try await withTaskCancellationHandler { try await sleeper.value } onCancel: { sleeper.cancel() }
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case let SerialPortError.cannotOpen(_, reason): reason
        case SerialPortError.disconnected: "hang-up or I/O error"
        case SerialPortError.closed: "closed under us"
        case let SerialPortError.io(_, reason): reason
        default: "\(error)"
        }
    }
}
