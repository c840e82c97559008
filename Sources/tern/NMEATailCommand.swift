import ArgumentParser
import Foundation
import Logging
import TernApp
import TernCore
import TernHardware
import TernNMEA

extension Tern.NMEA {
    /// `tern nmea tail --device /dev/serial0 --baud 9600 [--raw] [--autobaud]`: live fixes and link changes.
    struct NMEATail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tail",
            abstract: "Show live fixes from a serial GPS receiver, and when it goes, comes back, falls silent or talks at another baud rate.",
            discussion: """
                One line per fix: time (UTC), latitude, longitude, altitude, satellites, HDOP, speed. Lines \
                starting with 'link:' are link changes. Runs until Ctrl-C; unplugging the receiver does not stop it.
                """)

        /// --device, --baud, --control-socket, --config, --force: as `tern receiver`'s.
        @OptionGroup var port: ReceiverPortOptions

        @Flag(help: "Also print every valid NMEA sentence.")
        var raw = false

        @Flag(help: "When the receiver seems to talk at another baud rate, try them all and keep the one that works.")
        var autobaud = false

        func validate() throws {
            guard TermiosSerialPort.supportedBaudRates[port.baud] != nil else {
                throw ValidationError("--baud must be one of 4800, 9600, 19200, 38400, 57600, 115200, got \(port.baud)")
            }
        }

        func run() async throws {
            var problem: String?
            let socket = port.socket
            if port.device == nil, let client = ControlClient(path: socket, error: &problem) {
                try await tailDaemon(client, path: socket)
                return
            }
            let device = port.uart
            let baud = port.baud
            if let problem {
                FileHandle.standardError.write(Data("tern: \(problem)\n".utf8))
                throw ExitCode.failure
            }
            do { try ControlSocketPath.refuseIfHeld(device, force: port.force) } catch {
                FileHandle.standardError.write(Data("tern: \(error)\n".utf8))
                throw ExitCode.failure
            }
            try await probe(device)
            let logger = Logger(label: "tern.nmea", factory: { _ in SwiftLogNoOpLogHandler() })
            let serialPort = ReconnectingSerialPort(path: device, baudRate: baud, logger: logger)
            var options = NMEAReceiver.Options(autobaud: autobaud)
            if raw { options.onSentence = { sentence in emit("  " + sentence.raw) } }
            let receiver = NMEAReceiver(serialPort: serialPort, powerSwitch: NoPowerSwitch(), options: options, logger: logger)
            try await receiver.powerOn()
            emit("\(device) at \(baud) baud\(autobaud ? ", autobaud on" : ""); Ctrl-C to stop")
            emit(FixLine.header)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await state in receiver.linkStates() { emit("link: \(state)\(Self.hint(state, port: serialPort))") }
                }
                group.addTask {
                    for try await fix in receiver.fixes() { emit(FixLine(fix).description) }
                }
                try await group.next()
                group.cancelAll()
            }
            await serialPort.close()
        }

        /// What the running daemon reads, through its control socket: its fixes, and with --raw the sentences.
        private func tailDaemon(_ client: ControlClient, path: String) async throws {
            emit("the tern daemon's receiver, through \(path); Ctrl-C to stop")
            emit(FixLine.header)
            var framer = NMEAFramer()
            for await message in client.send(ControlMessage(command: "tap")) {
                if raw, let text = message.bytes, let bytes = Data(base64Encoded: text) {
                    for sentence in framer.append(Array(bytes)) { emit("  " + sentence.raw) }
                }
                if let fix = message.fix { emit(FixLine(fix).description) }
                if let error = message.error { emit("  (daemon: \(error))") }
            }
            emit("the daemon closed the connection (stopped?)")
        }

        /// Opens the device once so a missing, forbidden or busy device fails at once, naming the fix.
        private func probe(_ device: String) async throws {
            do {
                let opened = try TermiosSerialPort.open(path: device, baudRate: port.baud)
                await opened.close()
            } catch {
                FileHandle.standardError.write(Data("tern: \(error)\n".utf8))
                throw ExitCode.failure
            }
        }

        private static func hint(_ state: ReceiverLinkState, port: ReconnectingSerialPort) -> String {
            state == .connected ? " (\(port.path))" : ""
        }
    }
}

/// Writes one line to stdout at once (unbuffered: `tail` output is watched live, often through a pipe).
private func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// One fix as a fixed-width line.
struct FixLine: CustomStringConvertible {
    static let header = "time (UTC)                lat          lon            alt m  sats  hdop  speed m/s"

    let fix: Fix

    init(_ fix: Fix) { self.fix = fix }

    var description: String {
        let time = String(WireTime.format(fix.time).dropLast())  // UTC, to the millisecond, without the Z
        guard fix.quality.isUsable else {
            return "\(time)  no fix yet: \(fix.satellitesHeard.map { "\($0) satellites heard" } ?? "no satellite signals reported")"
        }
        let lat = String(format: "%11.6f", fix.coordinate.latitude)
        let lon = String(format: "%12.6f", fix.coordinate.longitude)
        return "\(time)  \(lat)  \(lon)  \(Self.pad(fix.altitude, "%7.1f"))  \(Self.pad(fix.satellites.map(Double.init), "%4.0f"))"
            + "  \(Self.pad(fix.hdop, "%4.1f"))  \(Self.pad(fix.speed, "%9.2f"))"
            + (fix.timeUntrusted ? "  (date far from the synchronised system clock: untrusted)" : "")
    }

    private static func pad(_ value: Double?, _ format: String) -> String {
        let text = value.map { String(format: format, $0) } ?? "-"
        let width = String(format: format, 0.0).count
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
