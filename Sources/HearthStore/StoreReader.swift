import HearthDomain
import HearthProjections
import LMDB

/// What a read snapshot of the store answers: the `DecisionState` queries (`StoreQueries`), account lookups,
/// listing and paging, and refresh-token lookup. It lives only inside `AccountStore.read`.
public struct StoreReader: StoreQueries {
    let projectionReader: ProjectionReader<ReadTransaction>

    public var decisionState: some DecisionState { projectionReader }

    /// The account of `project` a v1 (opaque) refresh token was issued to, if the index knows
    /// the token. Whether the account still holds it is the caller's question.
    public func account(issuedRefreshToken hash: String, in project: ProjectID) throws -> Account? {
        guard let record = try projectionReader.refreshToken(hash: hash), record.project == project else { return nil }
        return try projectionReader.account(record.uid, in: project)
    }

    /// Accounts of `project` linked to `providerId`, in federated-id order.
    public func accounts(linkedTo providerId: ProviderID, in project: ProjectID, limit: Int) throws -> [Account] {
        try projectionReader.accounts(linkedTo: providerId, in: project, limit: limit)
    }

    /// Anonymous accounts the project's cleanup would newly schedule if it were enabled now.
    public func unscheduledAnonymousAccounts(in project: ProjectID) throws -> Int {
        try projectionReader.unscheduledAnonymousAccounts(in: project)
    }

    /// Anonymous accounts of `project` due for cleanup at `now`, earliest first.
    public func accountsDueForCleanup(in project: ProjectID, now: Int64, limit: Int) throws -> [UserID] {
        try projectionReader.accountsDueForCleanup(in: project, now: now, limit: limit)
    }

    /// Accounts of every project.
    public func accountCount() throws -> Int { try projectionReader.accountCount() }

    public func accountCount(in project: ProjectID) throws -> Int { try projectionReader.accountCount(in: project) }

    /// Up to `limit` accounts of `project` in uid order, after `uid` (paging), past the first
    /// `skipping` of those.
    public func accounts(in project: ProjectID, after uid: UserID? = nil, skipping: Int = 0, limit: Int) throws -> [Account] {
        try projectionReader.accounts(in: project, after: uid, skipping: skipping, limit: limit)
    }
}
