import HearthLedger
import LMDB

/// How much of the disk and the map the store uses, read at a metrics scrape.
public struct StorageUse: Sendable, Equatable {
    /// LMDB's map: the most the data file may grow to before it is grown again.
    public var mapBytes: Int
    /// Pages up to the last one written (free ones included): the data file's real extent.
    public var usedBytes: Int
    /// The ledger's own pages (events and the stream index), not the projections'.
    public var ledgerBytes: Int
}

extension AccountStore {
    public func storageUse() throws -> StorageUse {
        let environment = environment
        let ledger = ledger
        return try translatingErrors {
            let info = environment.info
            let ledgerBytes = try environment.read { txn in try txn.bytes(ledger.events) + txn.bytes(ledger.streams) }
            return StorageUse(mapBytes: info.mapSize, usedBytes: (info.lastPageNumber + 1) * info.pageSize, ledgerBytes: ledgerBytes)
        }
    }

    /// Calls `observer` after each commit with how many write jobs shared it and how long the
    /// commit (its fsync) took: the group commit, seen from outside. Called at start.
    public func observeCommits(_ observer: @escaping @Sendable (_ jobs: Int, _ commitDuration: Duration) -> Void) {
        environment.writer.observeCommits { observer($0.jobs, $0.commitDuration) }
    }
}
