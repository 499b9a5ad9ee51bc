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
    }

    /// Backs `store` up into `target` (absent or empty). `store` may be a read-only open beside
    /// a running daemon. `copying(written, estimate)` in bytes, `verifying(checked, total)` in events.
    public static func backUp(
        _ store: AccountStore, to target: String, now: Int64,
        copying: @escaping (Int, Int) -> Void = { _, _ in }, verifying: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> Summary {
        let start = ContinuousClock.now
        // Everything acknowledged before the backup began is at or below this head.
        let before = try store.ledgerHead()
        let copied = try store.backUp(into: target, progress: copying)
        do {
            let (manifest, checked) = try verify(copied, of: store, in: target, now: now, verifying: verifying)
            guard manifest.headSequence > before.sequence || (manifest.headSequence == before.sequence && manifest.headHash == before.hash)
            else {
                throw BackupError.verificationFailed(
                    "the copy ends at event \(manifest.headSequence), before the ledger's head when the backup began (\(before.sequence))")
            }
            try manifest.write(to: target)
            return Summary(manifest: manifest, seconds: seconds(since: start), eventsVerified: checked)
        } catch {
            // A copy that did not verify is no backup: nothing is left that restore could take for one.
            DataDirectory.discardBackup(in: target)
            throw error
        }
    }

    /// Reads the copy back: the chain walked, the projections at the ledger's head, each file
    /// checksummed (the keys against their originals). Returns the manifest that records it.
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
            files.append(BackupManifest.File(name: file.name, bytes: file.bytes, sha256: sum))
        }
        let manifest = BackupManifest(
            format: BackupManifest.currentFormat, createdAt: now, source: absolutePath(store.directory.path),
            headSequence: head.sequence, headHash: head.hash, projectionDigest: digest, files: files)
        return (manifest, verification.eventsChecked)
    }

    private static func absolutePath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Restores the backup in `source` into `directory`: the files checked against the
    /// manifest first, then copied (refused while a daemon holds `directory`, and over an
    /// existing ledger unless `replacing`), then the restored store opened and proven equal to
    /// the backup: the chain walked to the same head, the same projection digest.
    public static func restore(
        from source: String, into directory: DataDirectory, replacing: Bool,
        copying: (Int, Int) -> Void = { _, _ in }, verifying: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> Summary {
        let start = ContinuousClock.now
        let manifest = try BackupManifest.read(from: source)
        for file in manifest.files {
            let path = source + "/" + file.name
            guard DurableFiles.exists(path) else { throw BackupError.missingFile(path: path) }
            guard try BackupManifest.checksum(of: path) == file.sha256 else { throw BackupError.checksumMismatch(path: path) }
        }
        let store = try directory.restore(from: DataDirectory(source), replacing: replacing, progress: copying)
        defer { store.close() }
        let verification = try store.audit.verify(progress: verifying)
        if let failure = verification.failure {
            throw BackupError.verificationFailed("the restored chain breaks at event \(failure.sequence): \(failure.reason)")
        }
        let head = try store.ledgerHead()
        guard head.sequence == manifest.headSequence, head.hash == manifest.headHash else {
            throw BackupError.verificationFailed("the restored ledger ends at \(head.sequence), the backup at \(manifest.headSequence)")
        }
        guard try store.maintenance.digest() == manifest.projectionDigest else {
            throw BackupError.verificationFailed("the restored projections differ from the backup's")
        }
        return Summary(manifest: manifest, seconds: seconds(since: start), eventsVerified: verification.eventsChecked)
    }
}
