import ArgumentParser

/// `fileshare`: observe, share and take in a folder's documents.
@main
struct Fileshare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fileshare",
        abstract: "Watch a folder tree and report precisely what changed.",
        subcommands: [Watch.self]
    )
}
