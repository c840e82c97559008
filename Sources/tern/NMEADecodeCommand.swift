import ArgumentParser

extension Tern.NMEA {
    struct NMEADecode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "decode", abstract: "Placeholder.")
        func run() async throws { throw ValidationError("not implemented yet") }
    }
}
