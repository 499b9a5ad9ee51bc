import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

extension AccountStore {
    /// Records that this node, `node`, leads `term` (`cluster.term_started`, with the head it
    /// starts from): the first write of the term, acknowledged like any other (once the
    /// synchronous followers hold it). Refused for a term no later than the ledger's latest.
    /// Nothing when the ledger already holds this term's start (a retry after it committed).
    /// A node that followed first folds what its ledger holds, on the fold's own pipeline
    /// (throwing what stops it): otherwise the term's first write would fold it on the writer
    /// thread, one record after another, however far the fold was behind.
    @discardableResult
    public func startTerm(_ term: UInt64, node: String) async throws -> StoredEvent? {
        try await followerFold.folded(through: ledgerHead().sequence)
        return try await writing {
            try await environment.writer.submit { [self] txn in
                try job(txn, Metadata(actor: .system), startingTerm: term) { try $0.startTerm(term, node: node) }
            }
        }
    }

    /// The latest term the ledger recorded the start of (folded or not); `nil` before the first.
    public func ledgerTerm() throws -> UInt64? {
        try translatingErrors { try environment.read { txn in try ledger.latestTerm(in: txn) } }
    }
}

extension StoreTransaction {
    func startTerm(_ term: UInt64, node: String) throws -> StoredEvent? {
        let txn = writer.txn
        let head = try ledger.head(in: txn)
        let started = TermStarted(term: term, node: node, after: head.sequence, afterHash: hex(head.hash))
        let current = try writer.projections.term(in: txn)
        if current == term { return nil }
        let payloads: [EventPayload]
        do {
            payloads = try ClusterTerms.start(started, after: current)
        } catch {
            throw StoreError.replication(error.description)
        }
        let envelopes = try ledger.append(payloads, to: .cluster(.terms), metadata: metadata, at: now, in: txn, keys: keys)
        for envelope in envelopes { try writer.apply(envelope) }
        return envelopes.first.map(StoredEvent.init)
    }
}
