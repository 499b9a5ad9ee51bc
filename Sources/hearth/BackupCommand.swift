import ArgumentParser
import HearthDomain
import HearthStore
import HearthTools

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the data directory (ledger, projections, signing keys, secrets key) into a new directory.",
        discussion: """
            Runs beside a live daemon: the copy is one consistent snapshot, compacted. It is \
            fsynced, then read back (the hash chain walked, the projections checked, every file \
            checksummed) before hearth-backup.json is written and success reported. The backup \
            holds the signing keys and the secrets key: keep it as private as the data directory.
            """)

    @OptionGroup var data: DataOptions

    @Option(name: .customLong("to"), help: "The backup directory to create (absent or empty).")
    var target: String

    func run() throws {
        let store = try data.directory.openForReading()
        defer { store.close() }
        let copying = ProgressBar(label: "copying   (bytes)")
        let verifying = ProgressBar(label: "verifying (events)")
        let summary = try BackupTool.backUp(
            store, to: target, now: store.clock.now(),
            copying: { copying.update(UInt64($0), of: UInt64($1)) }, verifying: verifying.update)
        copying.finish()
        verifying.finish()
        printSummary(summary, verb: "backed up \(data.directory) to \(target)")
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup made by hearth backup into a data directory (refuses while a daemon uses it).",
        discussion: """
            Checks every file of the backup against its manifest, copies them in (each fsynced \
            and renamed into place), then opens the restored store and proves it equal to the \
            backup: the same chain head and the same projection digest.
            """)

    @OptionGroup var data: DataOptions

    @Option(name: .customLong("from"), help: "The backup directory (made by hearth backup).")
    var source: String

    @Flag(help: "Replace a ledger already in the data directory (never one a daemon has open).")
    var replace = false

    func run() throws {
        let copying = ProgressBar(label: "copying   (bytes)")
        let verifying = ProgressBar(label: "verifying (events)")
        let summary = try BackupTool.restore(
            from: source, into: data.directory, replacing: replace,
            copying: { copying.update(UInt64($0), of: UInt64($1)) }, verifying: verifying.update)
        copying.finish()
        verifying.finish()
        printSummary(summary, verb: "restored \(source) into \(data.directory)")
    }
}

private func printSummary(_ summary: BackupTool.Summary, verb: String) {
    let out = Output.standardOutput
    let manifest = summary.manifest
    out.line(verb)
    out.line("events:      \(formatCount(manifest.headSequence)) (chain verified to \(manifest.headHash.prefix(16))…)")
    out.line("projections: \(manifest.projectionDigest)")
    for file in manifest.files { out.line("file:        \(file.name) \(formatCount(UInt64(file.bytes))) bytes") }
    out.line("seconds:     \(format3(summary.seconds))")
    out.flush()
}
