import ArgumentParser
import Foundation
import HearthStore
import HearthTools

/// `hearth ledger seal`: a ledger from before personal data was sealed, brought under
/// per-account keys.
struct LedgerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger", abstract: "Operations on the ledger itself.", subcommands: [Seal.self])

    struct Seal: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal a ledger written before per-account keys: no personal data left in plain text (stop the daemon first).",
            discussion: """
                Every event is written again, in order, with its sequence number, time, metadata and payload, into a \
                new chain whose first event links to the old head's hash; the personal data of each account is sealed \
                under its own key, and the keys of accounts that were deleted or purged are destroyed as their ends are \
                written. The old chain must verify, and the new one must verify and fold to the same projections, or \
                nothing changes; then the new ledger replaces the old in one rename. audit verify shows the old head \
                the new chain continues. Backups made before hold the plain text until they are deleted.
                """)

        @OptionGroup var data: DataOptions
        @Option(help: "Who runs the seal, recorded with it and shown by audit verify (default: the login that runs it, or sudo's caller).")
        var by: String?

        func run() throws {
            let progress = ProgressBar(label: "sealing")
            let environment = ProcessInfo.processInfo.environment
            let sealedBy = by ?? environment["SUDO_USER"] ?? environment["LOGNAME"] ?? environment["USER"]
            let summary = try data.directory.sealLedger(by: sealedBy, progress: progress.update)
            progress.finish()
            let out = Output.standardOutput
            guard let summary else {
                out.line("nothing to seal: every event's personal data is already under its account's key")
                out.flush()
                return
            }
            out.line("events:          \(formatCount(summary.events)) (\(formatCount(summary.plainRecords)) were in plain text)")
            out.line(
                "accounts' keys:  \(formatCount(UInt64(summary.liveKeys))) live, \(formatCount(UInt64(summary.destroyedKeys))) destroyed")
            out.line("replaced head:   event \(formatCount(summary.previousHead.sequence)), hash \(summary.previousHead.hash)")
            out.line("new head:        event \(formatCount(summary.head.sequence)), hash \(summary.head.hash)")
            if let sealedBy { out.line("sealed by:       \(sealedBy) (recorded in the ledger's origin)") }
            out.line("projections:     \(summary.digest) (unchanged)")
            out.line("seconds:         \(format3(summary.seconds))")
            out.flush()
        }
    }
}
