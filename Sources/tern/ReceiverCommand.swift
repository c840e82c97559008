import ArgumentParser

extension Tern {
    struct Receiver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "receiver", abstract: "Placeholder.")
        func run() async throws { throw ValidationError("not implemented yet") }
    }
}
