import ArgumentParser

@main
struct Tern: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tern",
        abstract: "Tern: a GPS tracking gateway for embedded Linux that never loses a position.",
        subcommands: [Demo.self, Run.self, Status.self, Queue.self, NMEA.self, Receiver.self, Simulate.self, Replay.self, Connectivity.self])
}
