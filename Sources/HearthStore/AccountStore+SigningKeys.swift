import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

extension AccountStore {
    /// The signing keys as the ledger's `cluster/signing-keys` stream leaves them, and the
    /// stream's version (it changes exactly when a rotation step is recorded or replicated).
    public func signingKeyRing() throws -> (ring: SigningKeyRing, version: UInt64) {
        try translatingErrors { try environment.read { txn in try Self.ring(ledger, in: txn) } }
    }

    /// The `cluster/signing-keys` stream's version alone: cheap enough to ask every second.
    public func signingKeyVersion() throws -> UInt64 {
        try translatingErrors { try environment.read { txn in try ledger.version(of: .cluster(.signingKeys), in: txn) } }
    }

    /// Publishes the key `published` names (its file already in the data directory), replacing
    /// `signing`, the key this node signs with: the first step of a rotation.
    @discardableResult
    public func publishSigningKey(_ published: SigningKeyPublished, signing: String, metadata: Metadata) async throws -> StoredEvent {
        let recorded = try await transaction(metadata: metadata) { transaction in
            try transaction.appendToSigningKeys { ring in try ring.rotate(to: published, signing: signing) }
        }
        return recorded[0]
    }

    /// Records the rotation steps due now (a key's activation, a replaced key's withdrawal);
    /// `file` says whether this node holds a key's file (`SigningKeyRing.due`).
    @discardableResult
    public func recordDueKeySteps(
        metadata: Metadata = Metadata(actor: .scheduler), file: @escaping @Sendable (String) -> KeyFileAvailability = { _ in .held }
    ) async throws -> [StoredEvent] {
        try await transaction(metadata: metadata) { transaction in
            try transaction.appendToSigningKeys { ring in ring.due(at: transaction.now, file: file) }
        }
    }

    static func ring(_ ledger: Ledger, in txn: some Transaction) throws -> (ring: SigningKeyRing, version: UInt64) {
        var ring = SigningKeyRing()
        let events = try ledger.events(of: .cluster(.signingKeys), in: txn)
        for event in events { ring.apply(event.payload, at: event.recordedAt) }
        return (ring, UInt64(events.count))
    }
}

extension StoreTransaction {
    /// Appends what `decide` makes of the signing keys as they stand in this transaction.
    func appendToSigningKeys(_ decide: (SigningKeyRing) throws -> [EventPayload]) throws -> [StoredEvent] {
        let (ring, version) = try AccountStore.ring(ledger, in: writer.txn)
        let payloads = try decide(ring)
        guard !payloads.isEmpty else { return [] }
        let envelopes = try ledger.append(
            payloads, to: .cluster(.signingKeys), expecting: .exactly(version), metadata: metadata, at: now, in: writer.txn,
            keys: keys)
        for envelope in envelopes { try writer.apply(envelope) }
        return envelopes.map(StoredEvent.init)
    }
}
