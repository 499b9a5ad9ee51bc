import HearthLedger
import HearthProjections
import LMDB

/// Catch-up, rebuild and digest of the projections. Rebuild is catch-up from an emptied
/// state, so the code that keeps projections current after a crash or upgrade is the code a
/// rebuild exercises.
public struct StoreMaintenance: Sendable {
    let store: AccountStore

    private var projections: ProjectionMaintenance {
        ProjectionMaintenance(environment: store.environment, ledger: store.ledger, projections: store.projections)
    }

    /// Applies every event after the projections' checkpoint (all of them if the stored
    /// projections were built by another format). `progress(applied, total)` runs as each
    /// chunk commits. Nothing else may write the projections meanwhile. When `shouldStop`
    /// says so between chunks, it ends with `StoreError.interrupted`, its work so far kept.
    @discardableResult
    public func catchUp(
        progress: (_ applied: UInt64, _ total: UInt64) -> Void = { _, _ in }, shouldStop: () -> Bool = { false }
    ) throws -> UInt64 {
        try translatingErrors { try projections.catchUp(progress: progress, shouldStop: shouldStop) }
    }

    /// Moves the key table's entries keyed by stream name, as Hearth wrote them before keys were
    /// appended by first sequence (`StreamKeys`), in transactions of 10,000: run by every
    /// writable open, before anything is written. Returns how many it moved.
    @discardableResult
    func moveLegacyStreamKeys() throws -> Int {
        // Read first: an open that has nothing to move costs no write transaction.
        let ledger = store.ledger
        guard try translatingErrors({ try store.environment.read { try ledger.keys.holdsLegacyEntries(in: $0) } }) else { return 0 }
        var moved = 0
        while true {
            let batch = try translatingErrors {
                try store.environment.writer.perform { txn in try store.ledger.keys.moveLegacyEntries(limit: 10_000, in: txn) }
            }
            moved += batch
            if batch < 10_000 { return moved }
        }
    }

    /// See `ProjectionMaintenance.stampFormatIfEmpty`: run by every writable open.
    func stampFormatIfEmpty() throws {
        try translatingErrors { try projections.stampFormatIfEmpty() }
    }

    /// Drops every projection and refolds the whole ledger.
    @discardableResult
    public func rebuild(progress: (_ applied: UInt64, _ total: UInt64) -> Void = { _, _ in }) throws -> UInt64 {
        try translatingErrors { try projections.rebuild(progress: progress) }
    }

    /// SHA-256 over every projection table's keys and values, and the checkpoint: equal
    /// digests mean byte-identical projections.
    public func digest() throws -> String {
        try translatingErrors { try projections.digest() }
    }

    /// Each projection table's digest, and the checkpoint (`hearth projections digest --tables`).
    public func tableDigests() throws -> (tables: [(name: String, digest: String)], checkpoint: UInt64) {
        try translatingErrors { try projections.tableDigests() }
    }

    /// Events the projections have yet to apply (the ledger's head less their checkpoint), or
    /// every event when a format change means they must be rebuilt.
    public func eventsBehind() throws -> UInt64 {
        try translatingErrors {
            try store.environment.read { txn in
                let head = try store.ledger.head(in: txn).sequence
                guard try store.projections.storedFormat(in: txn) == Projections.formatVersion else { return head }
                return head - min(head, try store.projections.checkpoint(in: txn))
            }
        }
    }
}
