import ArgumentParser
import HearthDomain
import HearthHTTP
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
            let store = try data.directory.openForReading()
            defer { store.close() }
            let now = store.clock.now()
            let statuses = try store.read { reader in
                try (project.map { [$0] } ?? reader.configuredProjects()).map { try reader.cleanupStatus(of: $0, now: now) }
            }
            let out = Output.standardOutput
            for status in statuses {
                if json {
                    out.line(CleanupAPI.json(status).text)
                    continue
                }
                out.line("\(status.project): cleanup \(status.enabled ? "on" : "off"), period \(duration(status.periodSeconds))")
                out.line("  scheduled   \(formatCount(UInt64(status.scheduled)))")
                out.line("  due now     \(formatCount(UInt64(status.dueNow)))")
                out.line("  next due    \(status.nextDueAt.map { Timestamp.iso8601(milliseconds: $0) } ?? "-")")
                out.line("  purged in the last 30 days: \(formatCount(UInt64(status.purgedLast30Days)))")
                for day in status.purgedByDay { out.line("    \(dayText(day.day))  \(formatCount(UInt64(day.accounts)))") }
            }
            if statuses.isEmpty { out.line("no project has settings of its own: cleanup is off everywhere") }
            out.flush()
        }
    }

    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "How many anonymous accounts turning cleanup on now would schedule, and when they would go, by day.")

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption
        @Flag(help: "Print JSON, as the HTTP route answers.") var json = false

        func run() throws {
            let store = try data.directory.openForReading()
            defer { store.close() }
            let now = store.clock.now()
            let preview = try store.read { try $0.cleanupPreview(of: project.project, now: now) }
            let out = Output.standardOutput
            if json {
                out.line(CleanupAPI.json(preview).text)
            } else {
                out.line("\(preview.project): cleanup \(preview.enabled ? "on" : "off"), period \(duration(preview.periodSeconds))")
                out.line("  would schedule     \(formatCount(UInt64(preview.wouldSchedule)))")
                out.line("  already scheduled  \(formatCount(UInt64(preview.alreadyScheduled)))")
                let widest = max(preview.dueByDay.map(\.accounts).max() ?? 1, 1)
                for day in preview.dueByDay {
                    let bar = String(repeating: "#", count: max(1, day.accounts * 40 / widest))
                    out.line("    \(dayText(day.day))  \(bar) \(formatCount(UInt64(day.accounts)))")
                }
            }
            out.flush()
        }
    }
}

private func dayText(_ day: Int64) -> String {
    String(Timestamp.iso8601(milliseconds: day * DayCount.millisecondsPerDay).prefix(10))
}

private func duration(_ seconds: Int64) -> String {
    seconds % 86_400 == 0 ? "\(seconds / 86_400) days" : "\(seconds) seconds"
}
