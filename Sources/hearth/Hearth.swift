import ArgumentParser
import Foundation
import HearthStore
import NIOCore
import NIOPosix

@main
struct Hearth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "Hearth: an event-sourced account ledger that speaks the Firebase Auth protocol.",
        subcommands: [
            Serve.self, Project.self, Cleanup.self, Projections.self, Audit.self, Users.self, Backup.self, Restore.self,
            LedgerCommand.self, Compact.self, ClusterCommand.self, Keys.self, Bench.self, Demo.self, Bridge.self, Settings.self,
        ])

    /// Whether Swift concurrency's jobs run on the server's event loops (`serve` only).
    nonisolated(unsafe) static var runsOnEventLoops = false

    /// For `serve`, first of all, on the main thread and before any other concurrency work (as
    /// NIO requires): Swift concurrency's jobs then run on the server's event loops, so a
    /// request's handler does not hop to a second thread pool and back (about 1.4x the lookups
    /// and 1.6x the refreshes per second on two cores). Blocking work stays off the loops: the
    /// ledger writer and password hashing have threads of their own.
    static func main() async {
        if CommandLine.arguments.dropFirst().first == "serve" {
            runsOnEventLoops = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        await main(nil)
    }
}

/// `--data`, for every command that opens a data directory.
struct DataOptions: ParsableArguments {
    @Option(name: .customLong("data"), help: "The data directory (default: $HEARTH_DATA_DIR or ./.hearth/data).")
    var explicit: String?

    /// `--data`, else `$HEARTH_DATA_DIR`, else `./.hearth/data`.
    var directory: DataDirectory { DataDirectory(explicit, environment: ProcessInfo.processInfo.environment) }
}
