#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthDomain
import HearthLedger
import LMDB

/// Folds events into the projections within one write transaction.
///
/// Accounts are cached and written back once, sorted by key, at `flush()`: an account touched
/// by many events in a write job or rebuild chunk is decoded and encoded once, not per event.
/// Indexes are written through as they change. The live writer flushes at the end of each
/// write job, and in between serves the job's reads of accounts (`account(_:in:)`, through
/// `WriteState`); a rebuild flushes once per chunk; both reach the same bytes, which the
/// digest proves.
public final class ProjectionWriter {
    private struct AccountKey: Hashable {
        var project: ProjectID
        var uid: UserID
    }

    /// An account as last read or folded, with its record key; the ones events changed are
    /// written back at `flush()`.
    private struct CachedAccount {
        var id: AccountKey
        var key: [UInt8]
        var account: Account?
        var changed = false
    }

    /// What the indexes derive from, captured before an event so its changes can be diffed.
    /// Holding the arrays costs a retain; they are copied only if the event changes them.
    private struct IndexedFields {
        var email: String?
        var phoneNumber: String?
        var providers: [ProviderLink]
        var refreshTokens: [String]
        var isAnonymous: Bool
    }

    public let projections: Projections
    public let txn: WriteTransaction
    private var accountSlots: [AccountKey: Int] = [:]
    private var accounts: [CachedAccount] = []
    /// The slot used last: an account's events mostly come together (a sign-in is two).
    private var lastSlot = 0
    private var configs: [ProjectID: ProjectConfig] = [:]
    private var lastSequence: UInt64?
    private var encoder = ByteWriter(capacity: 512)

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

    /// Writes cached accounts, in key order, and the checkpoint.
    public func flush() throws {
        let order = accounts.indices.sorted { left, right in
            accounts[left].key.withUnsafeBytes { l in
                accounts[right].key.withUnsafeBytes { r in
                    let common = memcmp(l.baseAddress!, r.baseAddress!, min(l.count, r.count))
                    return common != 0 ? common < 0 : l.count < r.count
                }
            }
        }
        for index in order where accounts[index].changed {
            if let account = accounts[index].account {
                encoder.removeAll()
                account.encode(to: &encoder)
                try txn.putBytes(projects.accounts, accounts[index].key, encoder.bytes)
            } else {
                try txn.delete(projects.accounts, accounts[index].key)
            }
        }
        accounts.removeAll(keepingCapacity: true)
        accountSlots.removeAll(keepingCapacity: true)
        if let lastSequence { try projects.setCheckpoint(lastSequence, in: txn) }
    }

    private var projects: Projections { projections }

    /// The account as the events applied so far left it (not yet flushed), else as stored.
    public func account(_ uid: UserID, in project: ProjectID) throws -> Account? {
        accounts[try slot(AccountKey(project: project, uid: uid), creating: false)].account
    }

    /// The cache slot of an account, read from the projection on first use. A creation needs
    /// no read: a stream is created only when it has no account (new, or deleted before).
    private func slot(_ key: AccountKey, creating: Bool) throws -> Int {
        if lastSlot < accounts.count && accounts[lastSlot].id == key { return lastSlot }
        if let slot = accountSlots[key] {
            lastSlot = slot
            return slot
        }
        let stored = creating ? nil : try projections.reader(txn).account(key.uid, in: key.project)
        accounts.append(CachedAccount(id: key, key: Keys.account(key.project, key.uid), account: stored))
        lastSlot = accounts.count - 1
        accountSlots[key] = lastSlot
        return lastSlot
    }

    /// Read field by field, in place: copying the whole account would retain every field.
    private func indexedFields(_ slot: Int) -> IndexedFields {
        accounts.withUnsafeBufferPointer { buffer in
            guard let account = buffer[slot].account else {
                return IndexedFields(email: nil, phoneNumber: nil, providers: [], refreshTokens: [], isAnonymous: false)
            }
            return IndexedFields(
                email: account.email, phoneNumber: account.phoneNumber, providers: account.providers,
                refreshTokens: account.refreshTokens, isAnonymous: account.isAnonymous)
        }
    }

    private func config(_ project: ProjectID) throws -> ProjectConfig {
        if let cached = configs[project] { return cached }
        let stored = try projections.reader(txn).config(of: project)
        configs[project] = stored
        return stored
    }

    private func applyAccountEvent(_ event: RecordedEvent, _ key: AccountKey) throws {
        let creating = if case .accountCreated = event.payload { true } else { false }
        let slot = try slot(key, creating: creating)
        let before = indexedFields(slot)
        Evolve.apply(event.payload, to: &accounts[slot].account, uid: key.uid, at: event.recordedAt)
        accounts[slot].changed = true
        let after = indexedFields(slot)
        let project = key.project
        try updateIndex(projects.emails, before.email, after.email, key.uid) { Keys.email(project, $0) }
        try updateIndex(projects.phones, before.phoneNumber, after.phoneNumber, key.uid) { Keys.phone(project, $0) }
        if before.providers != after.providers { try updateFederatedIds(key, before.providers, after.providers) }
        if before.refreshTokens != after.refreshTokens {
            // Only v1 tokens, which do not name their account, need the token-hash index.
            let unnamed = if case .refreshTokenIssued(let issued) = event.payload, !issued.namesAccount { issued.tokenHash } else { String?.none }
            try updateRefreshTokens(key, before.refreshTokens, after.refreshTokens, indexing: unnamed, at: event.recordedAt)
        }
        if before.isAnonymous != after.isAnonymous {
            try updateCleanup(key, anonymousSince: after.isAnonymous ? accounts[slot].account?.createdAt : nil)
        }
    }

    private func updateIndex(
        _ table: Projections.Table, _ old: String?, _ new: String?, _ uid: UserID, _ key: (String) -> [UInt8]
    ) throws {
        guard old != new else { return }
        if let old { try txn.delete(table, key(old)) }
        if let new { try txn.put(table, key(new), Array(uid.rawValue.utf8)) }
    }

    private func updateFederatedIds(_ key: AccountKey, _ before: [ProviderLink], _ after: [ProviderLink]) throws {
        let old = Set(before.map { Keys.federated(key.project, $0.providerId, $0.federatedId) })
        let new = Set(after.map { Keys.federated(key.project, $0.providerId, $0.federatedId) })
        for bytes in old.subtracting(new).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try txn.delete(projects.federatedIds, bytes)
        }
        for bytes in new.subtracting(old).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try txn.put(projects.federatedIds, bytes, Array(key.uid.rawValue.utf8))
        }
    }

    /// Retired tokens leave the index (a token that names its account was never in it);
    /// `indexing`, a v1 token just issued, enters it.
    private func updateRefreshTokens(_ key: AccountKey, _ old: [String], _ new: [String], indexing: String?, at: Int64) throws {
        // At most `Evolve.maxRefreshTokensPerAccount` each: linear scans beat building sets.
        for hash in old where !new.contains(hash) { try txn.delete(projects.refreshTokens, Array(hash.utf8)) }
        guard let indexing, new.contains(indexing), !old.contains(indexing) else { return }
        let record = RefreshTokenRecord(project: key.project, uid: key.uid, issuedAt: at).binaryEncoded
        try txn.put(projects.refreshTokens, Array(indexing.utf8), record)
    }

    /// Keeps `anonymousAccounts` and the cleanup schedule in step with the account: created
    /// anonymous -> listed (and scheduled if cleanup is on); upgraded or gone -> unlisted.
    private func updateCleanup(_ key: AccountKey, anonymousSince createdAt: Int64?) throws {
        let bytes = Keys.account(key.project, key.uid)
        if let createdAt {
            if try config(key.project).anonymousCleanup {
                let due = createdAt + anonymousCleanupDelayMilliseconds
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
