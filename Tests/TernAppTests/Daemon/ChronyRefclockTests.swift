import Foundation
import Testing
import TernApp
import TernSimulation
import TernTesting

#if canImport(Glibc)
import Glibc
#endif

/// `[time] chrony_socket` through real processes: the simulated GPS on a PTY (keeping real UTC:
/// its epochs on the wall clock's whole seconds, paced at 9600 baud), `tern run` reading it as a
/// serial receiver, and Debian's chronyd with the SOCK line Tern ships (deploy/chrony/tern.conf),
/// run with `-x` (it never touches the host's clock) on its own sockets, pid and drift files.
@Suite(.timeLimit(.minutes(2)), .serialized) struct ChronyRefclockTests {
    static let chronydPath = "/usr/sbin/chronyd"
    static let chronycPath = "/usr/bin/chronyc"
    static let canRun: Bool =
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/chronyd") && FileManager.default.isExecutableFile(atPath: "/usr/bin/chronyc")
    static let isRoot: Bool = geteuid() == 0
    /// The SOCK line Tern ships, from the file flash-image.sh installs.
    static let shippedLine: String? = {
        let file = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../../deploy/chrony/tern.conf")
        let text = try? String(contentsOf: file, encoding: .utf8)
        return text?.split(separator: "\n").first { $0.hasPrefix("refclock SOCK ") }.map(String.init)
    }()

    /// How far the system clock may be ahead of the receiver's time as chronyd measures it. A sample's
    /// `tv` is when Tern read the cycle's first sentence (GGA, ~70 bytes: ~73 ms on the wire at 9600
    /// baud after the epoch's second), so the clock looks that much ahead, plus the PTY's and the
    /// scheduler's delays; never behind (a sentence cannot be read before it is sent).
    static let aheadBound = 0.0...0.150

    @Test(.enabled(if: canRun, "Debian's chrony is not installed (apt install chrony; .ci/run installs it)"),
          .enabled(if: isRoot, "chronyd binds its sockets as root before dropping to _chrony: run as root (CI does)"),
          .enabled(if: TernExecutable.url != nil, "the tern executable was not built beside the tests"),
          .enabled(if: shippedLine != nil, "deploy/chrony/tern.conf has no refclock SOCK line"))
    func chronydSelectsTheReceiverTernFeedsItWithinTheNMEALatency() async throws {
        let directory = NSTemporaryDirectory() + "tern-chrony-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/chrony.tern.sock"
        let commandSocket = directory + "/cmd/chronyd.sock"

        // chronyd with the shipped line at the test's socket; -x: the host's clock is left alone.
        let line = try #require(Self.shippedLine).replacingOccurrences(of: TernConfig.Time.defaultChronySocket, with: socket)
        try """
            \(line)
            bindcmdaddress \(commandSocket)
            cmdport 0
            port 0
            pidfile \(directory)/chronyd.pid
            driftfile \(directory)/chronyd.drift

            """.write(toFile: directory + "/chrony.conf", atomically: true, encoding: .utf8)
        let chronydStarted = ContinuousClock.now
        let chronyd = try DaemonProcess(Self.chronydPath, ["-x", "-d", "-f", directory + "/chrony.conf"], output: directory + "/chronyd.log")
        defer {
            chronyd.signal(SIGTERM)
            var status: Int32 = 0
            // Reaped here, whatever happened above: no chronyd outlives the test.
            for _ in 0..<50 where waitpid(chronyd.pid, &status, WNOHANG) == 0 { usleep(100_000) }
            chronyd.signal(SIGKILL)
            waitpid(chronyd.pid, &status, WNOHANG)
        }
        #expect(await eventually(within: .seconds(10)) { ClockSourceCheck.isSocket(socket) }, "chronyd made no socket: \(log(directory))")

        // The simulated GPS, its tick 0 on a whole second of the wall clock, powered and on the sky.
        let now = Date()
        let whole = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        var model = ReceiverModel.mt3339
        model.coldTTFF = 2
        let power = SimulatedPowerSwitch()
        try await power.setPower(on: true)
        let gps = try SimulatedGPS(power: power, options: .init(startTime: whole, model: model, seed: 1))
        let clock = ContinuousClock()
        let tick0 = clock.now.advanced(by: .seconds(-Date().timeIntervalSince(whole)))

        try """
            device = "tern-chrony"
            data_dir = "\(directory)/data"
            status_file = "\(directory)/status.json"
            control_socket = "\(directory)/control.sock"
            [receiver]
            kind = "serial"
            device = "\(gps.devicePath)"
            baud = 9600
            [power]
            method = "none"
            [scheduler]
            policy = "always-on"
            [uplink]
            url = "http://127.0.0.1:9/positions"
            [time]
            chrony_socket = "\(socket)"

            """.write(toFile: directory + "/tern.toml", atomically: true, encoding: .utf8)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await gps.run(clock: clock, from: tick0) }
            let tern = try TernExecutable.start(["run", "--config", directory + "/tern.toml"])
            // Until chronyd selects the receiver (`#*`), at most 60 s.
            var selected: String?
            let deadline = clock.now.advanced(by: .seconds(60))
            while clock.now < deadline, selected == nil {
                try await Task.sleep(for: .seconds(1))
                selected = chronyc(commandSocket, "sources")?.split(separator: "\n").first { $0.hasPrefix("#,*,GPS,") }.map(String.init)
            }
            let took = chronydStarted.duration(to: clock.now)
            let tracking = chronyc(commandSocket, "tracking").flatMap(ChronyTracking.init(csv:))
            tern.process.interrupt()
            let result = await tern.finish()
            group.cancelAll()

            #expect(selected != nil, "chronyd never selected GPS: \(chronyc(commandSocket, "sources") ?? "-"); tern: \(result.stderr.suffix(2000)); chronyd: \(log(directory))")
            let ahead = try #require(tracking?.systemTimeOffset)
            print("chrony: GPS selected \(took) after chronyd started; system clock \(String(format: "%+.1f", ahead * 1000)) ms ahead of the receiver's time")
            #expect(tracking?.reference == "GPS")
            #expect(Self.aheadBound.contains(ahead), "the clock is \(ahead) s ahead of the receiver's time")
            #expect(result.stderr.contains("giving the receiver's time to chrony"), "\(result.stderr.suffix(2000))")
        }
    }

    /// `chronyc -h SOCKET -n -c ARGUMENT`'s output, nil when it failed.
    private func chronyc(_ socket: String, _ argument: String) -> String? {
        let process = Process()
        process.executableURL = URL(filePath: Self.chronycPath)
        process.arguments = ["-h", socket, "-n", "-c", argument]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    private func log(_ directory: String) -> String {
        (try? String(contentsOfFile: directory + "/chronyd.log", encoding: .utf8)) ?? "(no log)"
    }
}
