import ArgumentParser
import AsyncHTTPClient
import Foundation
import TernCore
import Logging
import TernApp
import TernHardware
import TernNMEA
import TernUplink

extension Tern {
    struct Doctor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check everything a person would check on a tracker, in order, each with the fix.",
            discussion: """
                The config (and placeholders in it), the UART (exists, not the Pi 5 debug port, no serial \
                console on it, nobody else holding it, NMEA arriving at the baud rate), the GPIO lines (exist, \
                free), the data directory (writable, free space), the queue (quick_check), the daemon (running, \
                report fresh), the metrics textfile (when configured: its directory, kept fresh), the clock (what synchronises it: chrony to the receiver or to NTP; with [time] chrony_socket, chrony's refclock) and the uplink (resolves, answers, TLS verifies). \
                Exit 0 all ok, 1 any FAIL, 2 only warnings.
                """)

        @Option(help: "Path of the TOML config.")
        var config: String = TernConfig.defaultPath

        @Flag(help: "Print the checks as JSON.")
        var json = false

        @Option(help: .hidden)
        var procCmdline = "/proc/cmdline"

        func run() async throws {
            let loaded: TernConfig
            do {
                loaded = try TernConfig.load(path: config)
            } catch {
                let failed = DoctorCheck("config", .fail, "\(error)", fix: "fix \(config) (tern config check)")
                try print(failed)
                throw ExitCode(1)
            }
            var system = TernApp.Doctor.System()
            system.cmdline = procCmdline
            system.clockSynchronised = { SystemClock.isSynchronised() }
            system.probeGPIO = { chip, line in
                let spec: GPIOLine = switch line {
                case let .offset(offset): .offset(offset)
                case let .name(name): .name(name)
                }
                return switch GPIOLineProbe.probe(chip: chip, line: spec) {
                case .free: .free
                case let .held(by): .held(by: by)
                case .missingChip: .missingChip
                case .missingLine: .missingLine
                }
            }
            system.sampleUART = { device, baud in await Self.sample(device: device, baud: baud) }
            system.chronyc = { await ClockSourceCheck.chronyc($0) }
            system.reach = { url, caFile in await Self.reach(url, caFile: caFile, timeout: loaded.uplink.connectTimeout) }
            let checks = await TernApp.Doctor(config: loaded, configPath: config, system: system).run()
            if json {
                let encoder = JSONOutput.encoder()
                FileHandle.standardOutput.write(try encoder.encode(["checks": checks]) + Data("\n".utf8))
            } else {
                checks.forEach { Swift.print($0.line) }
            }
            throw ExitCode(TernApp.Doctor.exitCode(checks))
        }

        private func print(_ check: DoctorCheck) throws {
            // (the one failed check when the config does not load)
            if json {
                FileHandle.standardOutput.write(try JSONOutput.encoder(pretty: false).encode(["checks": [check]]) + Data("\n".utf8))
            } else {
                Swift.print(check.line)
            }
        }

        /// Reads the UART for 3 s and frames what comes.
        static func sample(device: String, baud: Int) async -> TernApp.Doctor.UARTSample {
            let port: TermiosSerialPort
            do { port = try TermiosSerialPort.open(path: device, baudRate: baud) } catch { return .failed("\(error)") }
            var framer = NMEAFramer()
            var bytes = 0
            let deadline = ContinuousClock.now + .seconds(3)
            while ContinuousClock.now < deadline {
                let chunk: [UInt8] = (try? await withThrowingTaskGroup(of: [UInt8].self) { group -> [UInt8] in
                    group.addTask { try await port.read(maxCount: 1024) }
                    group.addTask {
                        try await Task.sleep(until: deadline)
                        return []
                    }
                    let first = try await group.next() ?? []
                    group.cancelAll()
                    return first
                }) ?? []
                bytes += chunk.count
                _ = framer.append(chunk)
            }
            await port.close()
            return .read(bytes: bytes, sentences: framer.stats.sentences, checksumErrors: framer.stats.checksumErrors)
        }

        /// nil when the server answers (any HTTP status but a redirect or a web page; for MQTT a TCP
        /// connection and, for mqtts://, a TLS handshake whose certificate verifies), else why not: a
        /// redirect is named with its target (Tern never follows one), and a 2xx web page is a captive
        /// portal's or another site's, not a tracking server's answer.
        static func reach(_ url: URL, caFile: String?, timeout: Duration) async -> String? {
            if url.scheme?.hasPrefix("mqtt") == true {
                return await MQTTProbe.check(url: url, caFile: caFile, timeout: timeout)
            }
            let settings = UplinkHTTPSettings(connectTimeout: timeout, readTimeout: .seconds(10), caFile: caFile)
            guard let configuration = try? settings.clientConfiguration(for: url) else { return "cannot use uplink.ca_file \(caFile ?? "")" }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            defer { Task { try? await client.shutdown() } }
            do {
                var request = HTTPClientRequest(url: url.absoluteString)
                request.method = .HEAD
                let answer = try await UplinkExchange.perform(request, client: client, deadline: .seconds(15), logger: Logger(label: "tern.doctor"))
                return ResponseClassifier.probeProblem(answer, url: url)
            } catch {
                return ResponseClassifier.tlsProblem(error, url: url) ?? readable(error, url: url)
            }
        }

        /// A socket error said plainly (`ResponseClassifier.describe`), with the address.
        static func readable(_ error: any Error, url: URL) -> String {
            let text = ResponseClassifier.describe(error)
            guard text != "\(error)" else { return text }
            let port = url.port ?? (url.scheme == "https" ? 443 : 80)
            return "cannot connect to \(url.host ?? "?"):\(port): \(text)"
        }
    }
}
