import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

extension AccountStore {
    /// Appends `payloads` as they are, without `decide`, and folds them into the projections
    /// as the live writer does: how a test records what an older Hearth wrote (a v1 event).
    /// `package`: for the package's tests and test support only, never an API.
    @discardableResult
    package func appendAsRecorded(_ payloads: [EventPayload], to stream: StreamID, at time: Int64) throws -> [StoredEvent] {
        try environment.writer.perform { [self] txn in
            let envelopes = try ledger.append(payloads, to: stream, metadata: Metadata(actor: .system), at: time, in: txn)
            let writer = projections.writer(txn)
            for envelope in envelopes { try writer.apply(envelope) }
            try writer.flush()
            return envelopes.map(StoredEvent.init)
        }
    }
}

extension AccountStore {
    /// Appends `payloads` as a Hearth from before per-account keys recorded them (format 1
    /// records, personal data in plain text), then folds them: how a test makes a ledger for
    /// `hearth ledger seal`. `package`: for tests and test support only.
    package func appendBeforeSealing(_ payloads: [EventPayload], to stream: StreamID, metadata: Metadata, at time: Int64) throws {
        _ = try environment.writer.perform { [self] txn in
            try ledger.appendBeforeSealing(payloads, to: stream, metadata: metadata, at: time, in: txn)
        }
        try maintenance.catchUp()
    }
}
