import Foundation
import Testing
import TernApp
import TernTesting

#if canImport(Glibc)
import Glibc
#endif

/// `tern doctor` as a person runs it over SSH, on real files, a real PTY and real processes.
@Suite(.timeLimit(.minutes(5))) struct DoctorTests {
    static let binary = TernExecutable.url

    /// A pseudo-terminal standing in for the receiver's UART.
    final class PTY {
        let master: Int32
        let slavePath: String

        init() throws {
            var master: Int32 = -1, slave: Int32 = -1
            var name = [CChar](repeating: 0, count: 256)
            guard openpty(&master, &slave, &name, nil, nil) == 0 else { throw POSIXError(.EIO) }
            close(slave)  // reopened by whoever plays the port; this process must not hold it
            self.master = master
            slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        deinit { close(master) }

        /// Writes NMEA into the master for `seconds`, a cycle every 200 ms.
        func talk(for seconds: Double) {
            let body = "GPRMC,120000.00,A,4548.00000,N,01554.00000,E,1.0,90.0,241126,,,A"
            let sum = body.utf8.reduce(0) { $0 ^ $1 }
            let line = Array("$\(body)*\(String(format: "%02X", sum))\r\n".utf8)
            // Its own descriptor: the PTY may be released first, and its number reused by another test's.
            let writer = dup(master)
            Thread.detachNewThread {
                let end = Date().addingTimeInterval(seconds)
                while Date() < end {
                    _ = line.withUnsafeBytes { write(writer, $0.baseAddress, line.count) }
                    usleep(200_000)
                }
                close(writer)
            }
        }
    }

    /// A data directory and a config around `receiver` and `power` sections; returns the config path.
    private func config(receiver: String, power: String = "", extra: String = "") async throws -> (path: String, directory: String) {
        let directory = NSTemporaryDirectory() + "tern-doctor-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        let text = """
            device = "van-7"
            data_dir = "\(directory)/data"
            status_file = "\(directory)/status.json"
            control_socket = "\(directory)/control.sock"
            \(extra)
            [receiver]
            \(receiver)
            [power]
            \(power)
            [uplink]
            url = "http://127.0.0.1:9/positions"
            """
        try text.write(toFile: directory + "/tern.toml", atomically: true, encoding: .utf8)
        return (directory + "/tern.toml", directory)
    }

    private func doctor(_ configPath: String, _ extra: [String] = []) async throws -> (status: Int32, lines: [String]) {
        let result = try await TernExecutable.run(["doctor", "--config", configPath] + extra)
        return (result.status, result.stdout.split(separator: "\n").map(String.init))
    }

    private func line(_ lines: [String], _ name: String) -> String? {
        lines.first { $0.dropFirst(5).hasPrefix(name + ":") }
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aUARTHeldByAnotherProcessIsAFailNamingIt() async throws {
        let pty = try PTY()
        let held = open(pty.slavePath, O_RDWR | O_NOCTTY)  // this test process holds it
        defer { close(held) }
        let (path, _) = try await config(receiver: "device = \"\(pty.slavePath)\"")
        let (status, lines) = try await doctor(path)
        #expect(status == 1)
        let holders = try #require(line(lines, "uart holders"), "\(lines)")
        #expect(holders.hasPrefix("FAIL") && holders.contains("pid \(getpid())"), "\(holders)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aSerialConsoleOnTheUARTIsAFail() async throws {
        let pty = try PTY()
        let (path, directory) = try await config(receiver: "device = \"\(pty.slavePath)\"")
        try "console=\((pty.slavePath as NSString).lastPathComponent),115200 root=/dev/mmcblk0p2\n".write(
            toFile: directory + "/cmdline", atomically: true, encoding: .utf8)
        let (_, lines) = try await doctor(path, ["--proc-cmdline", directory + "/cmdline"])
        #expect(line(lines, "serial console")?.hasPrefix("FAIL") == true, "\(lines)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func nmeaArrivingAtTheBaudRateIsOk() async throws {
        let pty = try PTY()
        pty.talk(for: 5)
        let (path, _) = try await config(receiver: "device = \"\(pty.slavePath)\"")
        let (_, lines) = try await doctor(path)
        #expect(line(lines, "nmea")?.hasPrefix("ok") == true, "\(lines)")
        #expect(line(lines, "uart holders")?.hasPrefix("ok") == true, "\(lines)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aSilentUARTIsAFail() async throws {
        let pty = try PTY()
        let (path, _) = try await config(receiver: "device = \"\(pty.slavePath)\"")
        let (_, lines) = try await doctor(path)
        #expect(line(lines, "nmea")?.hasPrefix("FAIL") == true, "\(lines)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aMissingGPIOChipIsAFail() async throws {
        let pty = try PTY()
        let (path, _) = try await config(receiver: "device = \"\(pty.slavePath)\"", power: "method = \"gpio\"\nchip = \"gpiochip99\"\nline = 17")
        let (_, lines) = try await doctor(path)
        #expect(line(lines, "gpio power line")?.contains("FAIL") == true, "\(lines)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aMissingMetricsDirectoryIsAFailNamingTheKey() async throws {
        let (path, _) = try await config(
            receiver: "kind = \"simulated\"", power: "method = \"simulated\"", extra: "[metrics]\ntextfile_dir = \"/nonexistent/textfiles\"")
        let (status, lines) = try await doctor(path)
        let metrics = try #require(line(lines, "metrics"), "\(lines)")
        #expect(metrics.hasPrefix("FAIL") && metrics.contains("metrics.textfile_dir"), "\(metrics)")
        #expect(status == 1)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aCorruptQueueIsAFailWithTheFix() async throws {
        let (path, directory) = try await config(receiver: "kind = \"simulated\"", power: "method = \"simulated\"")
        try Data(repeating: 0xA5, count: 8192).write(to: URL(filePath: directory + "/data/queue.sqlite"))
        let (_, lines) = try await doctor(path)
        let queue = try #require(line(lines, "queue"), "\(lines)")
        #expect(queue.hasPrefix("FAIL") && queue.contains("restart tern"), "\(queue)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aDeadDaemonsReportIsAFail() async throws {
        let (path, directory) = try await config(receiver: "kind = \"simulated\"", power: "method = \"simulated\"")
        let report = StatusReport(
            updated: Date(), started: Date(), pid: 999_999, device: "van-7", receiverLink: "receiver connected", alwaysPowered: false,
            gateway: .init(), uplink: .init(), queueDepth: 0)
        try StatusFile(path: directory + "/status.json").write(report)
        let (status, lines) = try await doctor(path)
        #expect(status == 1)
        #expect(line(lines, "daemon")?.contains("pid 999999") == true, "\(lines)")
    }

    @Test(.enabled(if: binary != nil && SmallFileSystem.canMount, "needs the tern executable, root and mount(8)"))
    func aFullDataDirectoryIsAFail() async throws {
        let fs = try SmallFileSystem(bytes: 1 << 20)
        _ = try fs.fill()
        let (path, _) = try await config(receiver: "kind = \"simulated\"", power: "method = \"simulated\"", extra: "")
        let text = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: #"data_dir = ".*/data""#, with: "data_dir = \"\(fs.directory.path)\"", options: .regularExpression)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (_, lines) = try await doctor(path)
        #expect(line(lines, "data directory")?.hasPrefix("FAIL") == true, "\(lines)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func jsonListsEveryCheckWithItsStatus() async throws {
        let (path, _) = try await config(receiver: "kind = \"simulated\"", power: "method = \"simulated\"")
        let result = try await TernExecutable.run(["doctor", "--config", path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [[String: String]]]
        let checks = try #require(object?["checks"])
        #expect(checks.contains { $0["name"] == "daemon" && $0["status"] == "fail" })
        #expect(checks.allSatisfy { ["ok", "warn", "fail"].contains($0["status"] ?? "") })
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func tailRefusesAUARTAnotherProcessHoldsUnlessForced() async throws {
        let pty = try PTY()
        let held = open(pty.slavePath, O_RDWR | O_NOCTTY)
        defer { close(held) }
        let result = try await TernExecutable.run(["nmea", "tail", "--device", pty.slavePath, "--control-socket", "/nonexistent/control.sock"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("pid \(getpid())") && result.stderr.contains("--force"), "\(result.stderr)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func theDaemonWarnsAtStartWhenAnotherProcessHoldsTheUART() async throws {
        let pty = try PTY()
        let held = open(pty.slavePath, O_RDWR | O_NOCTTY)
        defer { close(held) }
        let (path, _) = try await config(receiver: "device = \"\(pty.slavePath)\"")
        let daemon = try TernExecutable.start(["run", "--config", path])
        try await Task.sleep(for: .seconds(2))
        daemon.process.interrupt()
        let result = await daemon.finish()
        #expect(result.stderr.contains("also open in another program") && result.stderr.contains("pid \(getpid())"), "\(result.stderr)")
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func theDaemonWaitsForAUARTMissingAtStartAndStartsWhenItAppears() async throws {
        let device = NSTemporaryDirectory() + "tern-late-\(UUID().uuidString)"
        let (path, directory) = try await config(receiver: "device = \"\(device)\"")
        let daemon = try TernExecutable.start(["run", "--config", path])
        let waiting = await eventually(within: .seconds(10)) {
            let status = try? await TernExecutable.run(["status", "--config", path])
            return status?.status == 3 && status?.stdout.contains("waiting for the receiver's UART") == true
        }
        #expect(waiting, "tern status says what the daemon waits for (degraded)")
        #expect(daemon.process.isRunning, "a missing UART is waited for, not an exit")
        let pty = try PTY()
        try FileManager.default.createSymbolicLink(atPath: device, withDestinationPath: pty.slavePath)
        let started = await eventually(within: .seconds(15)) {
            FileManager.default.fileExists(atPath: directory + "/control.sock")
        }
        #expect(started, "the daemon started once the UART appeared")
        daemon.process.terminate()
        let result = await daemon.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("is usable now; starting"))
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func sigtermWhileWaitingForTheUARTIsACleanStop() async throws {
        let (path, _) = try await config(receiver: "device = \"/nonexistent/ttyAMA0\"")
        let daemon = try TernExecutable.start(["run", "--config", path])
        try await Task.sleep(for: .seconds(2))
        daemon.process.terminate()
        let result = await daemon.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("waiting for the receiver's UART /nonexistent/ttyAMA0"))
        #expect(result.stderr.contains("enable_uart=1"), "the wait names the fix")
    }

    @Test func processesWhoseOpenFilesCannotBeReadAreCountedNotPassedOver() throws {
        let proc = NSTemporaryDirectory() + "tern-proc-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: proc) }
        try FileManager.default.createDirectory(atPath: proc + "/41/fd", withIntermediateDirectories: true)
        try "gpsd\n".write(toFile: proc + "/41/comm", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: proc + "/41/fd/3", withDestinationPath: "/dev/ttyAMA0")
        try FileManager.default.createDirectory(atPath: proc + "/42", withIntermediateDirectories: true)
        try "cron\n".write(toFile: proc + "/42/comm", atomically: true, encoding: .utf8)  // no readable fd/
        let sut = Doctor.scanHolders(of: "/dev/ttyAMA0", procRoot: proc)
        #expect(sut.holders.map(\.pid) == [41] && sut.holders.map(\.name) == ["gpsd"])
        #expect(sut.unreadable == 1)
    }

    @Test(.enabled(if: binary != nil, "the tern executable was not built beside the tests"))
    func aPlaceholderConfigIsAFailSayingTheServiceWillNotStart() async throws {
        let directory = NSTemporaryDirectory() + "tern-doctor-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try """
            device = "van-7"
            data_dir = "\(directory)"
            status_file = "\(directory)/status.json"
            control_socket = "\(directory)/control.sock"
            [receiver]
            kind = "simulated"
            [power]
            method = "simulated"
            [uplink]
            url = "https://tracker.example.com/positions"
            """.write(toFile: directory + "/tern.toml", atomically: true, encoding: .utf8)
        let (status, lines) = try await doctor(directory + "/tern.toml")
        #expect(status == 1)
        let config = try #require(line(lines, "config"), "\(lines)")
        #expect(config.hasPrefix("FAIL") && config.contains("will not start") && config.contains("tracker.example.com"), "\(config)")
    }
}
