import ArgumentParser
import HearthDomain
import HearthStore
import HearthTools

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the ledger: replay events, verify the hash chain, show an account as of a time.",
        subcommands: [Replay.self, Verify.self, Show.self])

    struct ProjectOption: ParsableArguments {
        @Option(help: "The project the uid belongs to.")
        var project: ProjectID = ProjectID(environmentValue("HEARTH_PROJECT") ?? "demo-hearth") ?? ProjectID("demo-hearth")!
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print events as JSON lines (or text), oldest first.")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: ProjectOption
        @Option(help: "Only this account's events.") var uid: UserID?
        @Option(help: "Only events of this type (repeatable), e.g. account.created.") var type: [String] = []
        @Option(help: "Only events recorded at or after this time (RFC 3339 or Unix ms).") var since: TimeArgument?
        @Option(help: "Only events recorded at or before this time.") var until: TimeArgument?
        @Option(help: "json (one object per line) or text.") var format: AuditTool.Format = .json

        func run() throws {
            try data.directory.reading { store in
                let filter = AuditTool.Filter(
                    project: project.project, uid: uid, types: Set(type), since: since?.milliseconds, until: until?.milliseconds)
                let out = Output.standardOutput
                // A bar would tangle with the events themselves when both go to the terminal.
                let progress = out.isTerminal ? nil : ProgressBar(label: "replaying")
                let start = ContinuousClock.now
                let summary = try AuditTool(store: store).replay(filter, format: format, to: out) { scanned, total in
                    progress?.update(scanned, of: total)
                }
                progress?.finish()
                let err = Output.standardError
                err.line(
                    "replayed \(formatCount(summary.matched)) event\(summary.matched == 1 ? "" : "s") (\(formatCount(summary.scanned)) read) in "
                        + format3(seconds(since: start)) + " s")
                err.flush()
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walk the SHA-256 chain; exit 1 naming the first bad event if any record was altered.")

        @OptionGroup var data: DataOptions

        func run() throws {
            try data.directory.reading { store in
                let progress = ProgressBar(label: "verifying")
                let outcome = try store.audit.verify(progress: progress.update)
                progress.finish()
                // For the console's "last verified"; a directory this user can not write keeps the last one.
                do {
                    try store.audit.record(outcome, at: store.clock.now())
                } catch {
                    Output.standardError.line("note: the result was not recorded for the console: \(error)")
                    Output.standardError.flush()
                }
                if let failure = outcome.failure {
                    let err = Output.standardError
                    err.line("ledger verification FAILED at sequence \(failure.sequence): \(failure.reason)")
                    err.line("\(formatCount(outcome.eventsChecked)) events before it are intact")
                    err.flush()
                    throw ExitCode(1)
                }
                let out = Output.standardOutput
                out.line("ledger intact: \(formatCount(outcome.eventsChecked)) events, head hash \(outcome.headHash)")
                if let previous = outcome.continues {
                    out.line(
                        "it continues the ledger sealed on \(Timestamp.iso8601(milliseconds: previous.sealedAt))"
                            + (previous.sealedBy.map { " by \($0)" } ?? "")
                            + ", whose head was event \(formatCount(previous.sequence)), hash \(previous.hash)"
                    )
                }
                if outcome.plainTextEvents > 0 {
                    out.line(
                        "note: \(formatCount(outcome.plainTextEvents)) events were recorded before per-account keys and hold personal data in plain text, which deleting or erasing an account does not forget: `hearth ledger seal` (daemon stopped) rewrites them under keys"
                    )
                }
                out.flush()
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an account as it was at a moment (default: now).")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: ProjectOption
        @Option(help: "The account's uid.") var uid: UserID
        @Option(help: "The moment (RFC 3339 or Unix ms); default now.") var at: TimeArgument?

        func run() throws {
            try data.directory.reading { store in
                let time = at?.milliseconds ?? Int64.max
                let (account, through, isErased) = try AuditTool(store: store).account(uid, in: project.project, at: time)
                guard let account, let through else {
                    let err = Output.standardError
                    err.line(
                        through == nil
                            ? "no account \(uid) existed at that time"
                            : "account \(uid) was deleted by then (event #\(through!.sequence), \(through!.type.name))")
                    err.flush()
                    throw ExitCode(1)
                }
                let out = Output.standardOutput
                out.line(try AccountJSON.render(account, through: through, isErased: isErased))
                out.flush()
            }
        }
    }
}

extension AuditTool.Format: ExpressibleByArgument {}
