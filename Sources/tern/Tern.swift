import ArgumentParser
import TernHardware

@main
struct Tern: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tern",
        abstract: "Tern: a GPS tracking gateway for embedded Linux that never loses a position.",
        version: BuildInfo.summary,
        subcommands: [Demo.self, Run.self, Status.self, Doctor.self, Queue.self, Config.self, NMEA.self, Receiver.self, Simulate.self, Replay.self, Connectivity.self])
}
