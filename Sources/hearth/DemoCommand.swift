import ArgumentParser
import HearthDomain
import HearthStore
import HearthTools

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a short demo story (and optional bulk sample accounts) in a ledger, to try the audit and rebuild tools on.")

    @OptionGroup var data: DataOptions
    @Option(help: "Also append bulk sample accounts until the ledger holds this many events (project 'bench').")
    var events = 0
    @Option(help: "Also append bulk sample accounts until the data holds this many accounts (project 'bench').")
    var accounts = 0

    func run() async throws {
        let project = ProjectID("demo-hearth")!
        let directory = data.directory
        let store = try directory.open(as: "hearth demo")
        let recorded = try await DemoLedger.recordStoryOnce(store, project: project)
        if events > 0 || accounts > 0 {
            let progress = ProgressBar(label: accounts > 0 ? "accounts" : "events")
            try await DemoLedger.populate(store, events: events, accounts: accounts, progress: progress.update)
            progress.finish()
        }
        let head = try store.ledgerHead()
        let accountCount = try store.read { try $0.accountCount() }
        store.close()
        let out = Output.standardOutput
        out.line(
            (recorded ? "recorded a demo story in \(directory)" : "the demo story is already in \(directory)")
                + ": the ledger holds \(head.sequence) events, the projections \(accountCount) accounts")
        out.line("try:")
        out.line("  hearth audit replay --data \(directory) --format text")
        out.line("  hearth audit replay --data \(directory) --uid demo-alice")
        out.line("  hearth audit show --data \(directory) --uid demo-alice")
        out.line("  hearth audit verify --data \(directory)")
        out.line("  hearth projections rebuild --data \(directory)")
        out.flush()
    }
}
