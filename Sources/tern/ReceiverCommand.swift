import ArgumentParser
import Foundation
import TernApp
import TernCore
import TernHardware
import TernReceivers

extension Tern {
    struct Receiver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "receiver",
            abstract: "Diagnose the GPS receiver: send PMTK/UBX commands, detect the chipset.",
            subcommands: [ReceiverSend.self, ReceiverDetect.self])
    }
}

struct ReceiverPortOptions: ParsableArguments {
    @Option(help: "The receiver's serial device, opened directly (default: through the running daemon, else the config's device, else /dev/serial0).")
    var device: String?

    @Option(help: "The receiver's current baud rate: 4800, 9600, 19200, 38400, 57600 or 115200.")
    var baud = 9600

    @Option(help: "The daemon's control socket (default: the config's control_socket, else /run/tern/control.sock).")
    var controlSocket: String?

    @Option(help: "The config that names the control socket.")
    var config = TernConfig.defaultPath

    @Flag(help: "Open the UART even when another process holds it.")
    var force = false

    /// While `tern run` holds the receiver, its control socket; otherwise the UART (refused when another
    /// process holds it). A failure becomes a message and exit code 1.
    func open() throws -> any ReceiverLine {
        var problem: String?
        if device == nil, let daemon = DaemonLine(path: socket, error: &problem) {
            FileHandle.standardError.write(Data("tern: through the tern daemon (\(daemon.path))\n".utf8))
            return daemon
        }
        if let problem { ReceiverOutput.fail(problem) }
        let device = uart
        do {
            try ControlSocketPath.refuseIfHeld(device, force: force)
            return try TermiosSerialPort.open(path: device, baudRate: baud)
        } catch {
            ReceiverOutput.fail("cannot open \(device): \(error)")
        }
    }

    /// The UART opened directly.
    var uart: String { device ?? ControlSocketPath.defaultDevice(config: config) }

    /// The daemon's control socket.
    var socket: String { ControlSocketPath.resolve(explicit: controlSocket, config: config) }
}

extension Tern.Receiver {
    struct ReceiverSend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Send one command and wait for the receiver's acknowledgement.",
            discussion: """
                COMMAND is one of: \(ReceiverAction.usage).
                raw adds '$' and the checksum; ubx takes hex CLASS, ID and payload and adds sync, length and checksum.
                Exit status: 0 acknowledged (or sent, when no reply is expected), 1 rejected (PMTK001 flag 0-2, \
                ACK-NAK) or another error, 2 no acknowledgement before the timeout.
                """)

        @OptionGroup var port: ReceiverPortOptions

        @Option(help: "mediatek, quectel, ublox, ublox9, generic or auto (ask the receiver).")
        var chipset = "auto"

        @Option(help: "How long to wait for each reply, e.g. 2s or 500ms.")
        var timeout = "2s"

        @Argument(help: "The command and its arguments, e.g. 'rate 200' or 'ubx 0A 04'.")
        var command: [String]

        func run() async throws {
            let action: ReceiverAction
            do { action = try ReceiverAction.parse(command) } catch { throw ValidationError(error.description) }
            let wait = try DurationArgument.parse(timeout)
            let session = ReceiverSession(port: try port.open())
            defer { Task { [session] in await session.close() } }
            let driver = try await resolveDriver(for: action, session: session, wait: wait)
            let commands: [ReceiverCommand]
            do { commands = try action.commands(using: driver) } catch { throw ValidationError(error.description) }
            for command in commands {
                try await send(command, session: session, wait: wait)
            }
        }

        private func resolveDriver(
            for action: ReceiverAction, session: ReceiverSession, wait: Duration
        ) async throws -> any ReceiverDriver {
            guard action.needsDriver else { return GenericNMEADriver() }
            guard chipset.lowercased() == "auto" else {
                guard let driver = ReceiverDrivers.named(chipset) else {
                    throw ValidationError(
                        "unknown chipset '\(chipset)': expected mediatek, quectel, ublox, ublox9, generic or auto")
                }
                return driver
            }
            let detected = try await session.detect(within: wait)
            guard detected != .unknown else {
                ReceiverOutput.fail(
                    "could not identify the receiver within \(wait): pass --chipset mediatek|ublox, or check "
                        + ReceiverOutput.hints(device: port.uart, baud: port.baud))
            }
            print("chipset: \(detected.summary)")
            return detected.driver
        }

        private func send(_ command: ReceiverCommand, session: ReceiverSession, wait: Duration) async throws {
            print("-> \(command.summary)")
            try await session.write(command.bytes)
            let outcome = try await session.awaitReply(
                to: command, within: command.expectation == .nothing ? min(wait, .milliseconds(500)) : wait)
            switch outcome {
            case .accepted:
                print("<- accepted")
            case .rejected(let reason):
                ReceiverOutput.fail(
                    "the receiver rejected \(command.summary): \(reason). Check the arguments and the firmware (tern receiver send version)."
                )
            case nil where command.expectation == .nothing:
                print("sent; this command has no acknowledgement (after a baud change, reopen at the new rate)")
            case nil:
                ReceiverOutput.fail(
                    "no acknowledgement for \(command.summary) within \(wait). Check "
                        + ReceiverOutput.hints(device: port.uart, baud: port.baud) + ", and --chipset.",
                    code: 2)
            }
        }
    }

    struct ReceiverDetect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "detect",
            abstract: "Listen to the receiver, ask it for its version (PMTK605 and UBX MON-VER) and print the chipset.")

        @OptionGroup var port: ReceiverPortOptions

        @Option(help: "How long to listen at most, e.g. 5s.")
        var listen = "5s"

        func run() async throws {
            let wait = try DurationArgument.parse(listen)
            let session = ReceiverSession(port: try port.open())
            defer { Task { [session] in await session.close() } }
            let chipset = try await session.detect(within: wait)
            guard chipset != .unknown else {
                let heard = await session.messagesSeen
                ReceiverOutput.fail(
                    heard > 0
                        ? "heard \(heard) NMEA sentences but no chipset-specific reply: a generic NMEA receiver (no commands)"
                        : "nothing heard within \(wait). Check "
                            + ReceiverOutput.hints(device: port.uart, baud: port.baud))
            }
            print("chipset: \(chipset.summary)")
            print("driver:  \(chipset.driver.chipset)")
        }
    }
}

enum ReceiverOutput {
    static func hints(device: String, baud: Int) -> String {
        "the baud rate (--baud \(baud); HATs ship at 9600), the wiring (Pi TX to receiver RX), that the receiver is powered "
            + "and awake (tern receiver send wake), and that nothing else holds \(device) (gpsd, a serial console)"
    }

    static func fail(_ message: String, code: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
        exit(code)
    }
}
