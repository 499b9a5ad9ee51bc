import ArgumentParser
import HearthStore
import HearthTools

struct Projections: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild or fingerprint the projections derived from the ledger.",
        subcommands: [Rebuild.self, Digest.self])

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drop every projection and refold the whole ledger (refuses while a daemon runs).")

        @OptionGroup var data: DataOptions

        func run() throws {
            let progress = ProgressBar(label: "rebuilding")
            let summary = try RebuildTool(directory: data.directory).run(progress: progress.update)
            progress.finish()
            let out = Output.standardOutput
            out.line("events:    \(formatCount(summary.events))")
            out.line("seconds:   \(String(format3(summary.seconds)))")
            out.line("events/s:  \(formatCount(UInt64(summary.eventsPerSecond)))")
            out.line("digest:    \(summary.digestAfter)")
            out.line(
                summary.matches
                    ? "matches the projections it replaced" : "DIFFERS from the projections it replaced (\(summary.digestBefore))")
            out.flush()
        }
    }

    struct Digest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the SHA-256 digest of the live projections.")

        @OptionGroup var data: DataOptions

        @Flag(help: "Also print each table's digest and the checkpoint: where two copies differ.")
        var tables = false

        func run() throws {
            try data.directory.reading { store in
                let out = Output.standardOutput
                out.line(try store.maintenance.digest())
                if tables {
                    let (digests, checkpoint) = try store.maintenance.tableDigests()
                    for (name, digest) in digests { out.line("\(name) \(digest)") }
                    out.line("checkpoint \(checkpoint)")
                }
                out.flush()
            }
        }
    }
}

func format3(_ value: Double) -> String {
    let thousandths = Int((value * 1000).rounded())
    let fraction = String(thousandths % 1000)
    return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}
