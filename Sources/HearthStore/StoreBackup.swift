import Foundation
import LMDB

/// A file a backup wrote, and its size.
public struct BackupFile: Sendable, Equatable {
    public let name: String
    public let bytes: Int
}

extension AccountStore {
    /// Copies this store into `target` (absent or empty): `data.mdb` from one read snapshot,
    /// compacted, beside the writer (of this process or a daemon's), then the key files. Keys
    /// are copied after the snapshot, so every key a sealed secret in it needs already exists.
    /// Each file is fsynced, then the directory. `progress(written, estimate)` in bytes while
    /// the ledger is copied; the estimate is the map's used pages, free ones included.
    public func backUp(into target: String, progress: @escaping (_ written: Int, _ estimate: Int) -> Void = { _, _ in })
        throws -> [BackupFile]
    {
        try translatingErrors {
            if DurableFiles.exists(target) {
                guard DurableFiles.names(in: target).isEmpty else { throw StoreError.backupTargetNotEmpty(directory: target) }
            } else {
                try Environment.createDirectories(target)
            }
            let ledgerCopy = target + "/" + DataDirectory.ledgerFileName
            let estimate = environment.usedBytes
            try DurableFiles.create(ledgerCopy) { fd in try copyEnvironment(to: fd, estimate: estimate, progress: progress) }
            var files = [BackupFile(name: DataDirectory.ledgerFileName, bytes: DurableFiles.size(of: ledgerCopy) ?? 0)]
            for name in directory.keyFileNames {
                try DurableFiles.copy(directory.path + "/" + name, to: target + "/" + name)
                files.append(BackupFile(name: name, bytes: DurableFiles.size(of: target + "/" + name) ?? 0))
            }
            try DurableFiles.syncDirectory(of: ledgerCopy)
            return files
        }
    }

    /// LMDB's copy on a thread of its own, the file's growth reported meanwhile.
    private func copyEnvironment(to fd: Int32, estimate: Int, progress: (Int, Int) -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = CopyOutcome()
        let environment = environment
        Thread.detachNewThread {
            outcome.result = Result { try environment.copy(to: fd, compact: true) }
            done.signal()
        }
        var info = stat()
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if fstat(fd, &info) == 0 { progress(Int(info.st_size), estimate) }
        }
        try outcome.result?.get()
        if fstat(fd, &info) == 0 { progress(Int(info.st_size), max(estimate, Int(info.st_size))) }
    }
}

/// Handed from the copying thread to the waiting one; the semaphore orders the two accesses.
private final class CopyOutcome: @unchecked Sendable {
    var result: Result<Void, any Error>?
}

extension DataDirectory {
    /// Restores the backup in `backup` (its `data.mdb` and key files) into this directory and
    /// opens it. Refuses (`DataDirectoryLockError.held`) while anything holds this directory
    /// (a live daemon), and (`StoreError.restoreTargetHoldsLedger`) where a ledger already is,
    /// unless `replacing`; then the old ledger and keys are replaced. Every file is copied
    /// under a temporary name, fsynced and renamed. `progress(copied, total)` in bytes.
    public func restore(
        from backup: DataDirectory, replacing: Bool, progress: (_ copied: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> AccountStore {
        guard backup.holdsLedger else { throw StoreError.noLedger(directory: backup.path) }
        let lock = try DataDirectoryLock(self, holder: "hearth restore")
        do {
            try translatingErrors {
                if holdsLedger && !replacing { throw StoreError.restoreTargetHoldsLedger(directory: path) }
                let keys = backup.keyFileNames
                if replacing {
                    for name in keyFileNames where !keys.contains(name) { unlink(path + "/" + name) }
                }
                // The old reader table describes processes of the replaced environment.
                unlink(readerTableFile)
                let total = DurableFiles.size(of: backup.ledgerFile) ?? 0
                try DurableFiles.copy(backup.ledgerFile, to: ledgerFile) { progress($0, total) }
                for name in keys { try DurableFiles.copy(backup.path + "/" + name, to: path + "/" + name) }
            }
            return try AccountStore(directory: self, options: AccountStore.Options(), lock: lock, catchUp: true)
        } catch {
            lock.release()
            throw error
        }
    }
}
