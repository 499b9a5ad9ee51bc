import Foundation
import LMDB

/// A file a backup wrote, and its size.
public struct BackupFile: Sendable, Equatable {
    public let name: String
    public let bytes: Int

    public init(name: String, bytes: Int) {
        self.name = name
        self.bytes = bytes
    }
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
            do {
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
            } catch {
                DataDirectory.discardBackup(in: target)
                throw error
            }
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
        if fstat(fd, &info) == 0 { progress(Int(info.st_size), Int(info.st_size)) }  // compacted: smaller than the estimate
    }
}

/// Handed from the copying thread to the waiting one; the semaphore orders the two accesses.
private final class CopyOutcome: @unchecked Sendable {
    var result: Result<Void, any Error>?
}

extension DataDirectory {
    /// Removes what a backup wrote into `target` (its files, the reader table a verification
    /// opened, the manifest): a failed backup leaves nothing that could pass for one, and the
    /// directory, empty again, can be used for the next.
    public static func discardBackup(in target: String) {
        for name in DurableFiles.names(in: target)
        where name == ledgerFileName || name == "lock.mdb" || isKeyFileName(name) || name.hasPrefix("signing-key-")
            || name.hasPrefix("secrets-key") || name.hasPrefix("hearth-backup.json") || name.hasSuffix(".partial")
        {
            unlink(target + "/" + name)
        }
    }
}
