import ArgumentParser

@main
struct Hearth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "Hearth: an event-sourced account ledger that speaks the Firebase Auth protocol.",
        subcommands: [Serve.self, Projections.self, Audit.self, Bench.self, Demo.self])
}

/// Where the LMDB environment lives: `--data`, else `$HEARTH_DATA_DIR`, else `./.hearth/data`.
struct DataOptions: ParsableArguments {
    @Option(name: .customLong("data"), help: "The data directory (default: $HEARTH_DATA_DIR or ./.hearth/data).")
    var directory: String?

    var path: String {
        directory ?? environmentValue("HEARTH_DATA_DIR") ?? ".hearth/data"
    }
}
