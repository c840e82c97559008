import ArgumentParser

extension Tern {
    struct NMEA: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "nmea",
            abstract: "Decode and watch NMEA 0183: from a file, stdin or a live serial device.",
            subcommands: [NMEADecode.self, NMEATail.self])
    }
}
