import HearthDomain
import HearthLedger
import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `hearth ledger seal` did.
public struct LedgerSealSummary: Sendable {
    /// Records written before sealing (format 1): their personal data was in plain text.
    public var plainRecords: UInt64
    public var events: UInt64
    /// The replaced ledger's head, which the new chain's first event links to.
    public var previousHead: LedgerHead
    public var head: LedgerHead
    /// Streams whose key is live, and those whose key was destroyed (their subject had ended).
    public var liveKeys: Int
    public var destroyedKeys: Int
    /// The projections' digest: the same before and after.
    public var digest: String
    public var seconds: Double
}

extension AccountStore {
    /// Opens every live stream key with the data directory's ledger key: a restore proves the
    /// two belong together before it swaps them in. Returns how many keys opened.
    public func openStreamKeys() throws -> Int {
        try translatingErrors { try environment.read { try ledger.keys.openAll(in: $0) } }
    }

    /// Whether the ledger still holds records from before personal data was sealed (`hearth
    /// ledger seal` rewrites them). Sealing rewrites a ledger from its first record, so only
    /// the first need be looked at.
    public func holdsUnsealedRecords() throws -> Bool {
        try translatingErrors {
            try environment.read { txn in
                try txn.withValue(ledger.events, forKey: BigEndianUInt64(1)) { record in
                    guard let record, let format = record.first else { return false }
                    return format < RecordFormat.version
                }
            }
        }
    }
}

extension DataDirectory {
    /// Where `sealLedger` builds the new ledger; a run cut short leaves it, and the next removes it.
    static let sealStagingName = "seal-staging"

    /// Brings a ledger written before personal data was sealed under per-stream keys: every
    /// event is written again, in order, with the same sequence number, stream version, time,
    /// metadata and payload, into a new chain whose first record links to the old head's hash
    /// (recorded as its `LedgerOrigin`). Streams whose subject ended (deleted, purged, erased,
    /// used codes) have their keys destroyed as they are written, so what the old ledger kept
    /// in plain text is forgotten. The old chain must verify; the new one must verify and fold
    /// to the same projection digest, or nothing changes. Then the new file replaces the old in
    /// one rename. Takes the directory's lock: the daemon must be stopped. Returns `nil` when
    /// there is nothing to seal. `sealedBy`: who runs it, recorded in the origin beside the time.
    public func sealLedger(
        by sealedBy: String? = nil, clock: any WallClock = SystemClock(),
        progress: (_ written: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws -> LedgerSealSummary? {
        let started = ContinuousClock.now
        let lock = try DataDirectoryLock(self, holder: "hearth ledger seal")
        defer { lock.release() }
        try finishInterruptedRestore()
        let staging = path + "/" + Self.sealStagingName
        DurableFiles.removeFlatDirectory(staging)
        var options = AccountStore.Options()
        options.clock = clock
        let old = try AccountStore(directory: self, options: options, lock: nil, catchUp: true)
        var summary: LedgerSealSummary
        do {
            defer { old.close() }
            let plain = try plainRecordCount(old)
            guard plain > 0 else { return nil }
            let verification = try old.audit.verify()
            if let failure = verification.failure {
                throw StoreError.unreadable("the chain is broken at event \(failure.sequence) (\(failure.reason)): not sealed")
            }
            let previousHead = try old.ledgerHead()
            summary = LedgerSealSummary(
                plainRecords: plain, events: previousHead.sequence, previousHead: previousHead, head: previousHead, liveKeys: 0,
                destroyedKeys: 0, digest: try old.maintenance.digest(), seconds: 0)
            try translatingErrors {
                try DurableFiles.makeDirectory(staging)
                try DurableFiles.copy(ledgerKeyFile, to: staging + "/" + Self.ledgerKeyFileName)
            }
            do {
                try rewrite(old, into: staging, options: options, sealedBy: sealedBy, summary: &summary, progress: progress)
            } catch {
                DurableFiles.removeFlatDirectory(staging)
                throw error
            }
        }
        // The one step that changes the directory: the sealed file replaces the plain one.
        try translatingErrors {
            try DurableFiles.rename(staging + "/" + Self.ledgerFileName, to: ledgerFile)
            unlink(readerTableFile)
            try DurableFiles.syncDirectory(at: path)
        }
        DurableFiles.removeFlatDirectory(staging)
        summary.seconds = StoreProbes.seconds(since: started)
        return summary
    }

    private func plainRecordCount(_ store: AccountStore) throws -> UInt64 {
        var plain: UInt64 = 0
        try translatingErrors {
            try store.environment.read { txn in
                try store.ledger.forEachRecord(in: txn) { _, record in
                    if record.first.map({ $0 < RecordFormat.version }) == true { plain += 1 }
                    return .continue
                }
            }
        }
        return plain
    }

    /// The old ledger's events, written again into a new ledger in `staging`, then folded and
    /// checked against the old one.
    private func rewrite(
        _ old: AccountStore, into staging: String, options: AccountStore.Options, sealedBy: String?,
        summary: inout LedgerSealSummary, progress: (UInt64, UInt64) -> Void
    ) throws {
        let fresh = try AccountStore(directory: DataDirectory(staging), options: options, lock: nil, catchUp: false)
        defer { fresh.close() }
        let total = summary.previousHead.sequence
        let origin = LedgerOrigin(
            previousSequence: total, previousHash: try old.environment.read { try old.ledger.head(in: $0).hash },
            sealedAt: options.clock.now(), sealedBy: sealedBy)
        try translatingErrors {
            try fresh.environment.writer.perform { txn in try fresh.ledger.anchor(to: origin, in: txn) }
            var next: UInt64 = 1
            while next <= total {
                let batch = try old.environment.read { txn in
                    var envelopes: [EventEnvelope] = []
                    try old.ledger.forEachEvent(from: next, in: txn) { envelope in
                        envelopes.append(envelope)
                        return envelopes.count == 5_000 ? .stop : .continue
                    }
                    return envelopes
                }
                guard !batch.isEmpty else { break }
                try fresh.environment.writer.perform { txn in
                    for envelope in batch {
                        let written = try fresh.ledger.append(
                            [envelope.payload], to: envelope.stream, expecting: .exactly(envelope.streamVersion - 1),
                            metadata: envelope.metadata, at: envelope.recordedAt, in: txn)
                        guard written.first?.sequence == envelope.sequence, written.first?.recordedAt == envelope.recordedAt else {
                            throw StoreError.unreadable("event \(envelope.sequence) could not keep its place")
                        }
                    }
                }
                next += UInt64(batch.count)
                progress(next - 1, total)
            }
        }
        try fresh.maintenance.catchUp()
        let digest = try fresh.maintenance.digest()
        guard digest == summary.digest else {
            throw StoreError.unreadable("the sealed ledger folds to other projections (\(digest), not \(summary.digest)): not sealed")
        }
        let verification = try fresh.audit.verify()
        guard verification.isIntact, verification.eventsChecked == total else {
            throw StoreError.unreadable("the sealed ledger does not verify: not sealed")
        }
        summary.head = try fresh.ledgerHead()
        let counts = try translatingErrors { try fresh.environment.read { try fresh.ledger.keys.counts(in: $0) } }
        summary.liveKeys = counts.live
        summary.destroyedKeys = counts.destroyed
    }
}
