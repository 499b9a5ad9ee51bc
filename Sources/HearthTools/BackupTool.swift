import Foundation
import HearthStore

/// `hearth backup` and `hearth restore`: a hot, compacted, verified copy of a data directory
/// and its way back. A backup is done only once its copy has been read back (the hash chain
/// walked, the projections found at the ledger's head, every file checksummed) and the
/// manifest that says so written last.
public enum BackupTool {
    public struct Summary: Sendable {
        public var manifest: BackupManifest
        public var seconds: Double
        public var eventsVerified: UInt64
        /// The id of the backup key that authenticated the backup; `nil`: not authenticated.
        public var authenticatedBy: String?
        /// Each signing key file's `kid`.
        public var signingKeyIDs: [String: String]
        /// Restore: the directory the replaced ledger and keys were moved into, if any.
        public var previous: String? = nil
        /// Restore: how the keys differ from the ones the data directory had.
        public var keyChanges: [String] = []
    }

    /// Backs `store` up into `target` (absent or empty), authenticated under `key` (see
    /// `BackupKey`), or not when `key` is nil. `store` may be a read-only open beside a running
    /// daemon. `copying(written, estimate)` in bytes, `verifying(checked, total)` in events.
    public static func backUp(
        _ store: AccountStore, to target: String, now: Int64, key: BackupKey?,
        copying: @escaping (Int, Int) -> Void = { _, _ in }, verifying: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> Summary {
        let start = ContinuousClock.now
        // Everything acknowledged before the backup began is at or below this head.
        let before = try store.ledgerHead()
        let copied = try store.backUp(into: target, progress: copying)
        do {
            let (verified, checked) = try verify(copied, of: store, in: target, now: now, verifying: verifying)
            var manifest = verified
            guard manifest.headSequence > before.sequence || (manifest.headSequence == before.sequence && manifest.headHash == before.hash)
            else {
                throw BackupError.verificationFailed(
                    "the copy ends at event \(manifest.headSequence), before the ledger's head when the backup began (\(before.sequence))")
            }
            manifest.backupKeyID = key?.id
            try manifest.write(to: target, key: key)
            return Summary(
                manifest: manifest, seconds: seconds(since: start), eventsVerified: checked, authenticatedBy: key?.id,
                signingKeyIDs: Dictionary(uniqueKeysWithValues: manifest.files.compactMap { file in file.keyID.map { (file.name, $0) } }))
        } catch {
            // A copy that did not verify is no backup: nothing is left that restore could take for one.
            DataDirectory.discardBackup(in: target)
            throw error
        }
    }

    /// Deletes the backups beside `kept` (directories of its parent holding a manifest) made more
    /// than `days` days before `now`: how long an erased account's data outlives its erasure in
    /// backups is then bounded by `days`. Anything that is not a backup stays. Returns the paths
    /// of the backups deleted, oldest first.
    public static func prune(besides kept: String, olderThanDays days: Int, now: Int64) throws -> [String] {
        let trimmed = kept.hasSuffix("/") ? String(kept.dropLast()) : kept
        let parent = trimmed.contains("/") ? String(trimmed[..<trimmed.lastIndex(of: "/")!]) : "."
        let cutoff = now - Int64(days) * 86_400_000
        var expired: [(Int64, String)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: parent.isEmpty ? "/" : parent) {
            let path = (parent.isEmpty ? "" : parent) + "/" + name
            guard path != trimmed, name != (trimmed as NSString).lastPathComponent,
                let (manifest, _) = try? BackupManifest.read(from: path), manifest.createdAt < cutoff
            else { continue }
            expired.append((manifest.createdAt, path))
        }
        return expired.sorted { $0.0 < $1.0 }.map { _, path in
            DataDirectory.discardBackup(in: path)
            rmdir(path)
            return path
        }
    }

    /// Reads the copy back: the chain walked, the projections at the ledger's head, each file
    /// checksummed (the keys against their originals, the signing keys' `kid`s noted). Returns
    /// the manifest that records it.
    private static func verify(
        _ copied: [BackupFile], of store: AccountStore, in target: String, now: Int64, verifying: (UInt64, UInt64) -> Void
    ) throws -> (BackupManifest, UInt64) {
        let reading = try DataDirectory(target).openForReading()
        let verification: StoreAudit.Verification
        let behind: UInt64
        let digest: String
        let head: LedgerHead
        do {
            // Opening the copy made a reader table; it is no part of the backup.
            defer {
                reading.close()
                unlink(target + "/lock.mdb")
            }
            verification = try reading.audit.verify(progress: verifying)
            behind = try reading.maintenance.eventsBehind()
            digest = try reading.maintenance.digest()
            head = try reading.ledgerHead()
        }
        if let failure = verification.failure {
            throw BackupError.verificationFailed("the copied chain breaks at event \(failure.sequence): \(failure.reason)")
        }
        guard behind == 0 else { throw BackupError.verificationFailed("the copied projections are \(behind) events behind") }
        var files: [BackupManifest.File] = []
        for file in copied {
            let sum = try BackupManifest.checksum(of: target + "/" + file.name)
            if file.name != DataDirectory.ledgerFileName,
                try BackupManifest.checksum(of: store.directory.path + "/" + file.name) != sum
            {
                throw BackupError.verificationFailed("the copy of \(file.name) differs from the original")
            }
            let keyID = try BackupKeyFiles.signingKeyID(of: target + "/" + file.name, named: file.name)
            files.append(BackupManifest.File(name: file.name, bytes: file.bytes, sha256: sum, keyID: keyID))
        }
        let manifest = BackupManifest(
            format: BackupManifest.currentFormat, createdAt: now, source: absolutePath(store.directory.path),
            headSequence: head.sequence, headHash: head.hash, projectionDigest: digest, files: files, backupKeyID: nil)
        return (manifest, verification.eventsChecked)
    }

    private static func absolutePath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    public struct RestoreOptions: Sendable {
        /// Replace a ledger already in the data directory.
        public var replacing: Bool
        /// The key the backup's MAC must verify under.
        public var key: BackupKey?
        /// Restore a backup that carries no MAC (or without a key to check it), loudly.
        public var allowUnauthenticated: Bool
        /// Names the directory the replaced files go to (Unix milliseconds).
        public var now: Int64

        public init(replacing: Bool, key: BackupKey?, allowUnauthenticated: Bool, now: Int64) {
            self.replacing = replacing
            self.key = key
            self.allowUnauthenticated = allowUnauthenticated
            self.now = now
        }
    }

    /// Restores the backup in `source` into `directory`. The manifest's MAC is checked under
    /// the key first; then, under the directory's lock (refused while a daemon holds it, and
    /// over an existing ledger unless `replacing`), every file is copied into a staging
    /// directory and verified there: each checksum, each signing key against the `kid` the
    /// manifest records, the chain walked to the manifest's head, the projections' digest, the
    /// sealed client secrets opened with the secrets key. Only then are the files swapped in
    /// (`RestoreSession.commit`); any failure before leaves the data directory untouched.
    public static func restore(
        from source: String, into directory: DataDirectory, options: RestoreOptions,
        copying: (Int, Int) -> Void = { _, _ in }, verifying: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> Summary {
        let start = ContinuousClock.now
        let (manifest, bytes) = try BackupManifest.read(from: source)
        let authenticatedBy = try authenticate(manifest, bytes: bytes, in: source, options: options)
        let names = manifest.files.map(\.name)
        guard names.contains(DataDirectory.ledgerFileName) else {
            throw BackupError.missingFile(path: source + "/" + DataDirectory.ledgerFileName)
        }
        guard Set(names).count == names.count else { throw BackupError.unreadableManifest(path: source + "/" + BackupManifest.fileName) }
        for name in names {
            guard DataDirectory.isRestorable(name) else { throw StoreError.notRestorable(name: name) }
            guard DurableFiles.exists(source + "/" + name) else { throw BackupError.missingFile(path: source + "/" + name) }
        }
        let session = try RestoreSession(into: directory, replacing: options.replacing)
        do {
            try session.stage(names, from: source, progress: copying)
            // What is checked is what will be swapped in: the staged copies, not the backup.
            let staged = session.staging.path
            for file in manifest.files {
                guard try BackupManifest.checksum(of: staged + "/" + file.name) == file.sha256 else {
                    throw BackupError.checksumMismatch(path: source + "/" + file.name)
                }
            }
            let keyIDs = try BackupKeyFiles.verifySigningKeys(of: manifest, in: staged)
            try BackupKeyFiles.verifySecretsKey(in: staged)
            let checked = try verifyStaged(session.staging, against: manifest, verifying: verifying)
            let changes = BackupKeyFiles.changes(from: directory, to: staged, keyIDs: keyIDs)
            let previous = try session.commit(at: options.now)
            return Summary(
                manifest: manifest, seconds: seconds(since: start), eventsVerified: checked, authenticatedBy: authenticatedBy,
                signingKeyIDs: keyIDs, previous: previous, keyChanges: changes)
        } catch {
            session.abandon()
            throw error
        }
    }

    /// The backup key's verdict: its id, `nil` for an unauthenticated restore allowed as such.
    private static func authenticate(
        _ manifest: BackupManifest, bytes: [UInt8], in source: String, options: RestoreOptions
    ) throws -> String? {
        let code = try BackupManifest.readMAC(from: source)
        guard let key = options.key else {
            guard options.allowUnauthenticated else { throw BackupError.noBackupKey(restoring: true) }
            return nil
        }
        guard let code else {
            guard options.allowUnauthenticated else { throw BackupError.unauthenticated(directory: source) }
            return nil
        }
        guard key.isValid(code, for: bytes) else {
            throw BackupError.authenticationFailed(directory: source, keyGiven: key.id, backupNames: manifest.backupKeyID)
        }
        return key.id
    }

    /// Proves the staged copy the backup the manifest describes: the chain walked to the same
    /// head, the projections' bytes with the same digest, every sealed client secret opened by
    /// the staged secrets key, every account's key opened by the staged ledger key. A backup an older Hearth made holds projections in an older
    /// layout: once their digest proves them the backup's, they are rebuilt in the staging copy
    /// (as the daemon's first start would), so what is swapped in opens at once.
    private static func verifyStaged(
        _ staging: DataDirectory, against manifest: BackupManifest, verifying: (UInt64, UInt64) -> Void
    ) throws -> UInt64 {
        let checked: UInt64
        let behind: UInt64
        do {
            let store = try staging.openForReading()
            defer { store.close() }
            let verification = try store.audit.verify(progress: verifying)
            if let failure = verification.failure {
                throw BackupError.verificationFailed("the backup's chain breaks at event \(failure.sequence): \(failure.reason)")
            }
            let head = try store.ledgerHead()
            guard head.sequence == manifest.headSequence, head.hash == manifest.headHash else {
                throw BackupError.verificationFailed(
                    "the backup's ledger ends at event \(head.sequence) (\(head.hash.prefix(16))…), its manifest at \(manifest.headSequence) (\(manifest.headHash.prefix(16))…)"
                )
            }
            guard try store.maintenance.digest() == manifest.projectionDigest else {
                throw BackupError.verificationFailed("the backup's projections differ from the digest its manifest records")
            }
            checked = verification.eventsChecked
            behind = try store.maintenance.eventsBehind()
        }
        let store =
            behind == 0 ? try staging.openForReading() : try staging.open(as: "hearth restore (rebuilding the backup's projections)")
        defer { store.close() }
        let stillBehind = try store.maintenance.eventsBehind()
        guard stillBehind == 0 else {
            throw BackupError.verificationFailed("the backup's projections are \(stillBehind) events behind its ledger")
        }
        try BackupKeyFiles.verifySealedSecrets(in: store, secretsKey: staging.secretsKeyFile)
        do {
            _ = try store.openStreamKeys()
        } catch {
            throw BackupError.verificationFailed("the backup's ledger-key does not open its accounts' keys: \(error)")
        }
        return checked
    }
}
