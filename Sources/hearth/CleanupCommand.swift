import ArgumentParser
import HearthDomain
import HearthStore
import HearthTools
import HearthWire

/// `hearth cleanup status|preview`: the anonymous auto-cleanup, read from the data directory
/// (safe beside the daemon). The same numbers: `GET /hearth/v1/projects/{p}/cleanup[/preview]`.
struct Cleanup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Anonymous auto-cleanup: what runs, what is due, what was purged; what turning it on would do.",
        subcommands: [Status.self, Preview.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "On or off, scheduled, due now, next due time, purged in the last 30 days by day (every project, or one).")

        @OptionGroup var data: DataOptions
        @Option(help: "Only this project (default: every project with settings of its own).") var project: ProjectID?
        @Flag(help: "Print JSON, as the HTTP route answers.") var json = false

        func run() throws {
            try data.directory.reading { store in
                let now = store.clock.now()
                let statuses = try store.read { reader in
                    try (project.map { [$0] } ?? reader.configuredProjects()).map { try reader.cleanupStatus(of: $0, now: now) }
                }
                let out = Output.standardOutput
                for line in CleanupReportText.lines(statuses, json: json) { out.line(line) }
                out.flush()
            }
        }
    }

    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "How many anonymous accounts turning cleanup on now would schedule, and when they would go, by day.")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption
        @Flag(help: "Print JSON, as the HTTP route answers.") var json = false

        func run() throws {
            try data.directory.reading { store in
                let now = store.clock.now()
                let preview = try store.read { try $0.cleanupPreview(of: project.project, now: now) }
                let out = Output.standardOutput
                for line in CleanupReportText.lines(preview, json: json) { out.line(line) }
                out.flush()
            }
        }
    }
}
