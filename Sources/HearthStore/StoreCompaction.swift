import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `hearth compact` did: the file's size before and after.
public struct CompactionSummary: Sendable, Equatable {
    public var bytesBefore: Int
    public var bytesAfter: Int
}

extension DataDirectory {
    /// Rewrites `data.mdb` with its live pages only (LMDB's compacting copy), then puts it in
    /// place in one rename. LMDB reuses the pages a write frees but never zeroes them, so what
    /// a deleted account's projections held stays in the file until its pages are written over:
    /// after a compaction none of it is left. Takes the directory's lock: the daemon must be
    /// stopped (`hearth-compact.timer` restarts it through a compaction; docs/operations.md).
    public func compact() throws -> CompactionSummary {
        let lock = try DataDirectoryLock(self, holder: "hearth compact")
        defer { lock.release() }
        try finishInterruptedRestore()
        guard holdsLedger else { throw StoreError.noLedger(directory: path) }
        let copy = ledgerFile + ".compact"
        let before = DurableFiles.size(of: ledgerFile) ?? 0
        try translatingErrors {
            unlink(copy)
            let environment = try Environment(path: path)
            defer { environment.close() }
            do {
                try DurableFiles.create(copy) { fd in try environment.copy(to: fd, compact: true) }
            } catch {
                unlink(copy)
                throw error
            }
        }
        try translatingErrors {
            try DurableFiles.rename(copy, to: ledgerFile)
            unlink(readerTableFile)
            try DurableFiles.syncDirectory(at: path)
        }
        return CompactionSummary(bytesBefore: before, bytesAfter: DurableFiles.size(of: ledgerFile) ?? 0)
    }
}
