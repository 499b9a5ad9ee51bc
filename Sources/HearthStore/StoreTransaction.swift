import HearthDomain
import HearthLedger
import HearthProjections

/// The view a `transaction` body gets: state as of the commands run so far (the
/// `DecisionState` queries), the job's one instant, and `execute`.
public struct StoreTransaction: DecisionState {
    let ledger: Ledger
    let writer: ProjectionWriter
    public let metadata: Metadata
    /// The write job's instant (Unix ms): every event it records carries it as `recordedAt`,
    /// and the flows use it for creation times, uids and token issue times.
    public let now: Int64

    private var state: WriteState { WriteState(writer) }

    /// The same transaction, recording its next commands with `metadata` (e.g. naming the
    /// account a sign-up just minted as the actor).
    public func recording(as metadata: Metadata) -> StoreTransaction {
        StoreTransaction(ledger: ledger, writer: writer, metadata: metadata, now: now)
    }

    /// Decides, appends and projects one command within this transaction.
    @discardableResult
    public func execute(_ command: Command, expecting expected: ExpectedVersion = .any) throws -> [StoredEvent] {
        try run(command, expected).map(StoredEvent.init)
    }

    func run(_ command: Command, _ expected: ExpectedVersion) throws -> [EventEnvelope] {
        let payloads = try Decide.decide(command, state: state, now: now)
        let envelopes = try ledger.append(
            payloads, to: command.stream, expecting: expected, metadata: metadata, at: now, in: writer.txn)
        for envelope in envelopes { try writer.apply(envelope) }
        return envelopes
    }

    public func account(_ uid: UserID, in project: ProjectID) throws -> Account? {
        try state.account(uid, in: project)
    }

    public func owner(ofEmail email: String, in project: ProjectID) throws -> UserID? {
        try state.owner(ofEmail: email, in: project)
    }

    public func owner(ofProvider providerId: String, federatedId: String, in project: ProjectID) throws -> UserID? {
        try state.owner(ofProvider: providerId, federatedId: federatedId, in: project)
    }

    public func owner(ofPhone phoneNumber: String, in project: ProjectID) throws -> UserID? {
        try state.owner(ofPhone: phoneNumber, in: project)
    }

    public func config(of project: ProjectID) throws -> ProjectConfig {
        try state.config(of: project)
    }

    public func oobCode(_ codeHash: String, in project: ProjectID) throws -> OOBCode? {
        try state.oobCode(codeHash, in: project)
    }

    public func cleanupDueAt(_ uid: UserID, in project: ProjectID) throws -> Int64? {
        try state.cleanupDueAt(uid, in: project)
    }
}
