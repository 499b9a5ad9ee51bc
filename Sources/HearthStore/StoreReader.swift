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

    /// Up to `limit` anonymous accounts of any project due for cleanup at `now`.
    public func accountsDueForCleanup(now: Int64, limit: Int) throws -> [(ProjectID, UserID)] {
        var due: [(ProjectID, UserID)] = []
        for project in try projectionReader.configuredProjects() where due.count < limit {
            due += try accountsDueForCleanup(in: project, now: now, limit: limit - due.count).map { (project, $0) }
        }
        return due
    }

    /// Up to `limit` action codes of any project that expired unused by `now`, earliest first.
    public func codesExpired(by now: Int64, limit: Int) throws -> [(ProjectID, String)] {
        var expired: [(ProjectID, String)] = []
        try projectionReader.forEachCodeByExpiry { expiresAt, project, codeHash in
            guard expiresAt <= now, expired.count < limit else { return false }
            expired.append((project, codeHash))
            return true
        }
        return expired
    }

    /// When the next unused action code expires.
    public func nextCodeExpiry() throws -> Int64? {
        var next: Int64?
        try projectionReader.forEachCodeByExpiry { expiresAt, _, _ in
            next = expiresAt
            return false
        }
        return next
    }

    /// The earliest cleanup due time of any project.
    public func nextCleanupDue() throws -> Int64? {
        try projectionReader.configuredProjects().compactMap { try projectionReader.nextCleanupDue(in: $0) }.min()
    }

    /// The cleanup schedule of `project` in due order.
    public func forEachScheduledForCleanup(
        in project: ProjectID, _ body: (_ dueAt: Int64, _ uid: UserID) throws -> Bool
    ) throws {
        try projectionReader.forEachScheduled(in: project) { try body($0, $1) ? .continue : .stop }
    }

    /// The project's settings if any change to them was ever recorded (else it runs on defaults).
    public func recordedConfig(of project: ProjectID) throws -> ProjectConfig? {
        try projectionReader.recordedConfig(of: project)
    }

    /// Projects with settings of their own.
    public func configuredProjects() throws -> [ProjectID] { try projectionReader.configuredProjects() }

    /// Accounts of every project.
    public func accountCount() throws -> Int { try projectionReader.accountCount() }

    public func accountCount(in project: ProjectID) throws -> Int { try projectionReader.accountCount(in: project) }

    /// Up to `limit` accounts of `project` in uid order, after `uid` (paging), past the first
    /// `skipping` of those.
    public func accounts(in project: ProjectID, after uid: UserID? = nil, skipping: Int = 0, limit: Int) throws -> [Account] {
        try projectionReader.accounts(in: project, after: uid, skipping: skipping, limit: limit)
    }

    /// Up to `limit` accounts, the most recent first by `order`, after `position` (paging).
    public func accounts(
        in project: ProjectID, newestBy order: AccountListOrder, after position: (time: Int64, uid: UserID)?, limit: Int
    ) throws -> [Account] {
        try projectionReader.accounts(in: project, newestBy: order, after: position, limit: limit)
    }

    /// The project's accounts, by provider, and its sign-ups and sign-ins per day from `firstDay`.
    public func overview(of project: ProjectID, from firstDay: Int64) throws -> AccountOverview {
        AccountOverview(
            accounts: try projectionReader.accountCount(in: project), byProvider: try projectionReader.providerCounts(in: project),
            activity: try projectionReader.activity(in: project, from: firstDay))
    }

    /// Up to `limit` accounts whose email starts with `prefix`, in email order, after `after`.
    public func accounts(in project: ProjectID, emailPrefix prefix: String, after: String?, limit: Int) throws -> [Account] {
        try projectionReader.accounts(in: project, emailPrefix: prefix, after: after, limit: limit)
    }
}
