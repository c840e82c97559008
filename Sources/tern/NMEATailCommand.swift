import ArgumentParser

extension Tern.NMEA {
    struct NMEATail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "tail", abstract: "Placeholder.")
        func run() async throws { throw ValidationError("not implemented yet") }
    }
}
