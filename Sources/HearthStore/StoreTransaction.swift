import HearthDomain
import HearthLedger
import HearthProjections

/// The view a `transaction` body gets: state as of the commands run so far (the
/// `DecisionState` queries), the job's one instant, and `execute`.
public struct StoreTransaction: StoreQueries {
    let ledger: Ledger
    let writer: ProjectionWriter
    /// The keys this job's transaction opened or made (one unwrap per stream per job).
    let keys: StreamKeys.Cache
    public let metadata: Metadata
    /// The write job's instant (Unix ms): every event it records carries it as `recordedAt`,
    /// and the flows use it for creation times, uids and token issue times.
    public let now: Int64

    /// The job's view: accounts as its commands left them, indexes as written through.
    public var decisionState: some DecisionState { WriteState(writer) }

    /// The same transaction, recording its next commands with `metadata` (e.g. naming the
    /// account a sign-up just minted as the actor).
    public func recording(as metadata: Metadata) -> StoreTransaction {
        StoreTransaction(ledger: ledger, writer: writer, keys: keys, metadata: metadata, now: now)
    }

    /// Decides, appends and projects one command within this transaction.
    @discardableResult
    public func execute(_ command: Command, expecting expected: ExpectedVersion = .any) throws -> [StoredEvent] {
        let payloads = try Decide.decide(command, state: WriteState(writer), now: now)
        let envelopes = try ledger.append(
            payloads, to: command.stream, expecting: expected, metadata: metadata, at: now, in: writer.txn, keys: keys)
        for envelope in envelopes { try writer.apply(envelope) }
        return envelopes.map(StoredEvent.init)
    }
}
