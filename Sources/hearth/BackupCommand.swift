import ArgumentParser
import HearthDomain
import HearthStore
import HearthTools

/// `--key-file` and `$HEARTH_BACKUP_KEY_FILE`: the operator's backup key.
struct BackupKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key-file"),
        help:
            "The backup key (default: $HEARTH_BACKUP_KEY_FILE): at least 32 bytes, e.g. openssl rand -base64 32 > FILE. Keep it away from the backups."
    )
    var keyFile: String?

    /// The key named, if any.
    func key() throws -> BackupKey? {
        try (keyFile ?? environmentValue(BackupKey.environmentVariable)).map { try BackupKey(file: $0) }
    }
}

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the data directory (ledger, projections, signing keys, secrets key) into a new directory.",
        discussion: """
            Runs beside a live daemon: the copy is one consistent snapshot, compacted. It is \
            fsynced, then read back (the hash chain walked, the projections checked, every file \
            checksummed) before hearth-backup.json is written and success reported, with its \
            HMAC-SHA256 under the backup key in hearth-backup.json.hmac. The backup holds the \
            signing keys and the secrets key: keep it as private as the data directory.
            """)

    @OptionGroup var data: DataOptions
    @OptionGroup var backupKey: BackupKeyOptions

    @Option(name: .customLong("to"), help: "The backup directory to create (absent or empty).")
    var target: String

    @Flag(help: "Make a backup without a MAC: restore can not tell it unaltered, and asks for --allow-unauthenticated.")
    var unauthenticated = false

    @Option(
        name: .customLong("retain-days"),
        help: "Once this backup is made, delete the backups beside it (in the same parent directory) older than this many days.")
    var retainDays: Int?

    func validate() throws {
        if let retainDays, retainDays < 1 { throw ValidationError("--retain-days must be 1 or more") }
    }

    func run() throws {
        let key = try backupKey.key()
        if key != nil && unauthenticated { throw ValidationError("--unauthenticated and a backup key exclude each other") }
        if key == nil && !unauthenticated { throw BackupError.noBackupKey(restoring: false) }
        try data.directory.reading { store in
            let copying = ProgressBar(label: "copying   (bytes)")
            let verifying = ProgressBar(label: "verifying (events)")
            let summary = try BackupTool.backUp(
                store, to: target, now: store.clock.now(), key: key,
                copying: { copying.update(UInt64($0), of: UInt64($1)) }, verifying: verifying.update)
            copying.finish()
            verifying.finish()
            printSummary(summary, verb: "backed up \(data.directory) to \(target)")
            if let retainDays {
                let deleted = try BackupTool.prune(besides: target, olderThanDays: retainDays, now: store.clock.now())
                let out = Output.standardOutput
                for path in deleted { out.line("deleted backup older than \(retainDays) days: \(path)") }
                out.line("backups deleted: \(deleted.count)")
                out.flush()
            }
        }
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup made by hearth backup into a data directory (refuses while a daemon uses it).",
        discussion: """
            Checks the manifest's MAC under the backup key, then copies every file into a \
            staging directory inside the data directory and verifies it there (checksums, \
            signing keys against the manifest, the hash chain to the manifest's head, the \
            projection digest, the sealed secrets against the secrets key). Only then are the \
            files swapped in; the replaced ledger and keys are kept in <data>/previous-<time>. \
            Any failure before leaves the data directory untouched.
            """)

    @OptionGroup var data: DataOptions
    @OptionGroup var backupKey: BackupKeyOptions

    @Option(name: .customLong("from"), help: "The backup directory (made by hearth backup).")
    var source: String

    @Flag(help: "Replace a ledger already in the data directory (never one a daemon has open).")
    var replace = false

    @Flag(help: "Restore a backup that carries no MAC, or without the key to check it: nothing proves it unaltered.")
    var allowUnauthenticated = false

    func run() throws {
        let now = SystemClock().now()
        let options = BackupTool.RestoreOptions(
            replacing: replace, key: try backupKey.key(), allowUnauthenticated: allowUnauthenticated, now: now)
        let copying = ProgressBar(label: "copying   (bytes)")
        let verifying = ProgressBar(label: "verifying (events)")
        let summary = try BackupTool.restore(
            from: source, into: data.directory, options: options,
            copying: { copying.update(UInt64($0), of: UInt64($1)) }, verifying: verifying.update)
        copying.finish()
        verifying.finish()
        let err = Output.standardError
        for change in summary.keyChanges { err.line("warning: \(change)") }
        err.flush()
        printSummary(summary, verb: "restored \(source) into \(data.directory)")
    }
}

private func printSummary(_ summary: BackupTool.Summary, verb: String) {
    let out = Output.standardOutput
    let manifest = summary.manifest
    out.line(verb)
    if let key = summary.authenticatedBy {
        out.line("authentic:   HMAC-SHA256 under backup key \(key)")
    } else {
        out.line("authentic:   NOT AUTHENTICATED (no backup key: nothing proves this backup unaltered)")
        Output.standardError.line("warning: the backup is not authenticated")
        Output.standardError.flush()
    }
    out.line("events:      \(formatCount(manifest.headSequence)) (chain verified to \(manifest.headHash.prefix(16))…)")
    out.line("projections: \(manifest.projectionDigest)")
    for file in manifest.files {
        let key = summary.signingKeyIDs[file.name].map { " (kid \($0))" } ?? ""
        out.line("file:        \(file.name) \(formatCount(UInt64(file.bytes))) bytes\(key)")
    }
    if let previous = summary.previous {
        out.line("previous:    \(previous) (the replaced ledger and keys; delete it once the restore is confirmed)")
    }
    out.line("seconds:     \(format3(summary.seconds))")
    out.flush()
}
