import HearthDomain
import HearthLedger
import LMDB

/// Folds events into the projections within one write transaction.
///
/// Accounts are cached and written back once, sorted by key, at `flush()`: an account touched
/// by many events in a batch or rebuild chunk is decoded and encoded once, not per event.
/// Indexes are written through as they change. The live writer flushes after every command;
/// a rebuild flushes once per chunk; both reach the same bytes, which the digest proves.
public final class ProjectionWriter {
    private struct AccountKey: Hashable {
        var project: ProjectID
        var uid: UserID
    }

    /// An account as last read or folded; `changed` marks it for write-back.
    private struct CachedAccount {
        var account: Account?
        var changed: Bool
    }

    public let projections: Projections
    public let txn: WriteTransaction
    private var accounts: [AccountKey: CachedAccount] = [:]
    private var configs: [ProjectID: ProjectConfig] = [:]
    private var lastSequence: UInt64?

    init(projections: Projections, txn: WriteTransaction) {
        self.projections = projections
        self.txn = txn
    }

    public func apply(_ envelope: EventEnvelope) throws {
        try apply(RecordedEvent(envelope))
    }

    /// Folds one event into every projection.
    public func apply(_ envelope: RecordedEvent) throws {
        switch envelope.stream {
        case .account(let project, let uid):
            try applyAccountEvent(envelope, AccountKey(project: project, uid: uid))
        case .project(let project):
            let before = try config(project)
            let after = Evolve.project(before, envelope.payload)
            configs[project] = after
            try txn.put(projects.projects, Keys.project(project), after.binaryEncoded)
            if after.anonymousCleanup && !before.anonymousCleanup {
                try scheduleExistingAnonymousAccounts(project, dueAt: envelope.recordedAt + anonymousCleanupDelayMilliseconds)
            }
        case .oobCode(let project, let codeHash):
            let key = Keys.oobCode(project, codeHash)
            let before = try projections.reader(txn).oobCode(codeHash, in: project)
            if let after = Evolve.oobCode(before, envelope.payload, at: envelope.recordedAt) {
                try txn.put(projects.oobCodes, key, after.binaryEncoded)
            } else {
                try txn.delete(projects.oobCodes, key)
            }
        }
        lastSequence = envelope.sequence
    }

    /// Writes cached accounts and the checkpoint.
    public func flush() throws {
        let changed = accounts.filter(\.value.changed).map { (Keys.account($0.key.project, $0.key.uid), $0.value.account) }
        for (bytes, account) in changed.sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            if let account {
                try txn.put(projects.accounts, bytes, account.binaryEncoded)
            } else {
                try txn.delete(projects.accounts, bytes)
            }
        }
        accounts.removeAll(keepingCapacity: true)
        if let lastSequence { try projects.setCheckpoint(lastSequence, in: txn) }
    }

    private var projects: Projections { projections }

    private func account(_ key: AccountKey) throws -> Account? {
        if let cached = accounts[key] { return cached.account }
        return try projections.reader(txn).account(key.uid, in: key.project)
    }

    private func config(_ project: ProjectID) throws -> ProjectConfig {
        if let cached = configs[project] { return cached }
        let stored = try projections.reader(txn).config(of: project)
        configs[project] = stored
        return stored
    }

    private func applyAccountEvent(_ envelope: RecordedEvent, _ key: AccountKey) throws {
        let before = try account(key)
        let after = Evolve.account(before, envelope.payload, uid: key.uid, at: envelope.recordedAt)
        accounts[key] = CachedAccount(account: after, changed: true)
        let project = key.project
        try updateIndex(projects.emails, before?.email, after?.email, key.uid) { Keys.email(project, $0) }
        try updateIndex(projects.phones, before?.phoneNumber, after?.phoneNumber, key.uid) { Keys.phone(project, $0) }
        if before?.providers != after?.providers { try updateFederatedIds(key, before, after) }
        if before?.refreshTokens != after?.refreshTokens {
            try updateRefreshTokens(key, before, after, at: envelope.recordedAt)
        }
        if (before?.isAnonymous ?? false) != (after?.isAnonymous ?? false) { try updateCleanup(key, after) }
    }

    private func updateIndex(
        _ table: Projections.Table, _ old: String?, _ new: String?, _ uid: UserID, _ key: (String) -> [UInt8]
    ) throws {
        guard old != new else { return }
        if let old { try txn.delete(table, key(old)) }
        if let new { try txn.put(table, key(new), Array(uid.rawValue.utf8)) }
    }

    private func updateFederatedIds(_ key: AccountKey, _ before: Account?, _ after: Account?) throws {
        let old = Set((before?.providers ?? []).map { Keys.federated(key.project, $0.providerId, $0.federatedId) })
        let new = Set((after?.providers ?? []).map { Keys.federated(key.project, $0.providerId, $0.federatedId) })
        for bytes in old.subtracting(new).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try txn.delete(projects.federatedIds, bytes)
        }
        for bytes in new.subtracting(old).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try txn.put(projects.federatedIds, bytes, Array(key.uid.rawValue.utf8))
        }
    }

    private func updateRefreshTokens(_ key: AccountKey, _ before: Account?, _ after: Account?, at: Int64) throws {
        // At most `Evolve.maxRefreshTokensPerAccount` each: linear scans beat building sets.
        let old = before?.refreshTokens ?? []
        let new = after?.refreshTokens ?? []
        for hash in old where !new.contains(hash) { try txn.delete(projects.refreshTokens, Array(hash.utf8)) }
        let added = new.filter { !old.contains($0) }
        guard !added.isEmpty else { return }
        let record = RefreshTokenRecord(project: key.project, uid: key.uid, issuedAt: at).binaryEncoded
        for hash in added { try txn.put(projects.refreshTokens, Array(hash.utf8), record) }
    }

    /// Keeps `anonymousAccounts` and the cleanup schedule in step with the account: created
    /// anonymous -> listed (and scheduled if cleanup is on); upgraded or gone -> unlisted.
    private func updateCleanup(_ key: AccountKey, _ after: Account?) throws {
        let bytes = Keys.account(key.project, key.uid)
        if after?.isAnonymous == true, let after {
            if try config(key.project).anonymousCleanup {
                let due = after.createdAt + anonymousCleanupDelayMilliseconds
                try txn.put(projects.anonymousAccounts, bytes, dueBytes(due))
                try txn.put(projects.cleanupSchedule, Keys.cleanup(key.project, dueAt: due, key.uid), [])
            } else {
                try txn.put(projects.anonymousAccounts, bytes, [])
            }
        } else {
            if let due = try projections.reader(txn).cleanupDueAt(key.uid, in: key.project) {
                try txn.delete(projects.cleanupSchedule, Keys.cleanup(key.project, dueAt: due, key.uid))
            }
            try txn.delete(projects.anonymousAccounts, bytes)
        }
    }

    /// Cleanup was just enabled: anonymous accounts not yet scheduled become due in 30 days.
    /// Accounts already scheduled (cleanup was on before) keep their earlier date.
    private func scheduleExistingAnonymousAccounts(_ project: ProjectID, dueAt: Int64) throws {
        let prefix = Keys.project(project)
        var unscheduled: [[UInt8]] = []
        try txn.forEach(projects.anonymousAccounts, prefix: prefix) { key, value in
            if value.isEmpty { unscheduled.append(Array(key)) }
            return .continue
        }
        for key in unscheduled {
            guard let uid = UserID(String(decoding: key[prefix.count...], as: UTF8.self)) else { continue }
            try txn.put(projects.anonymousAccounts, key, dueBytes(dueAt))
            try txn.put(projects.cleanupSchedule, Keys.cleanup(project, dueAt: dueAt, uid), [])
        }
    }

    private func dueBytes(_ due: Int64) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bitPattern: due).bigEndian) { Array($0) }
    }
}
