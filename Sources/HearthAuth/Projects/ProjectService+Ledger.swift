import HearthDomain
import HearthStore

/// The ledger as the operator sees it in the console: its head, and the last time `hearth audit
/// verify` walked its hash chain and what that found. The chain is every project's, so only the
/// operator's credential sees it.
public struct LedgerStatus: Sendable {
    public var headSequence: UInt64
    public var headHash: String
    public var lastVerification: Verification?

    public struct Verification: Sendable {
        public var verifiedAt: Int64
        public var intact: Bool
        public var eventsChecked: UInt64
        public var headHash: String
        /// The first bad event and why, when not intact.
        public var failure: String?
    }
}

extension ProjectService {
    public func ledgerStatus(_ caller: Caller) throws -> LedgerStatus {
        guard caller.isOperator else { throw FirebaseError.insufficientPermission }
        let head = try store.ledgerHead()
        let verification = store.audit.lastVerification().map { record in
            LedgerStatus.Verification(
                verifiedAt: record.verifiedAt, intact: record.intact, eventsChecked: record.eventsChecked, headHash: record.headHash,
                failure: record.failedAt.map { "event \($0): \(record.failure ?? "")" })
        }
        return LedgerStatus(headSequence: head.sequence, headHash: head.hash, lastVerification: verification)
    }
}

extension ProjectService {
    /// The projects with settings of their own, for the operator to choose among.
    public func configuredProjects(_ caller: Caller) throws -> [ProjectID] {
        guard caller.isOperator else { throw FirebaseError.insufficientPermission }
        return try read { try $0.configuredProjects() }
    }
}
