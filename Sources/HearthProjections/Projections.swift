import HearthDomain
import HearthLedger
import LMDB

/// The read models, each a pure fold of the ledger, applied in the same transaction as the
/// append (so they are never behind it) and rebuildable from sequence 0 to the same bytes.
public struct Projections: Sendable {
    /// Bump when a record layout or index changes: the daemon then rebuilds on start.
    public static let formatVersion: UInt64 = 1

    public typealias Table = Database<[UInt8], [UInt8]>

    /// project, uid -> `Account`
    public let accounts: Table
    /// project, email -> uid
    public let emails: Table
    /// project, phone -> uid
    public let phones: Table
    /// project, provider id, federated id -> uid
    public let federatedIds: Table
    /// project, uid -> due time (8 bytes) or empty while cleanup has not scheduled it
    public let anonymousAccounts: Table
    /// project, due time, uid -> empty: the anonymous-cleanup schedule, in due order
    public let cleanupSchedule: Table
    /// token hash -> `RefreshTokenRecord`
    public let refreshTokens: Table
    /// project, code hash -> `OOBCode`
    public let oobCodes: Table
    /// project -> `ProjectConfig`
    public let projects: Table
    /// "checkpoint" -> last applied sequence; "format" -> `formatVersion`
    public let state: Database<String, BigEndianUInt64>

    /// Every table whose bytes the digest covers, in digest order.
    public var tables: [Table] {
        [accounts, emails, phones, federatedIds, anonymousAccounts, cleanupSchedule, refreshTokens, oobCodes, projects]
    }

    public static func open(_ environment: Environment) throws -> Projections {
        func table(_ name: String) throws -> Table { try environment.openDatabase(named: "projection.\(name)") }
        return Projections(
            accounts: try table("accounts"), emails: try table("emails"), phones: try table("phones"),
            federatedIds: try table("federated_ids"), anonymousAccounts: try table("anonymous_accounts"),
            cleanupSchedule: try table("cleanup_schedule"), refreshTokens: try table("refresh_tokens"),
            oobCodes: try table("oob_codes"), projects: try table("projects"),
            state: try environment.openDatabase(named: "projection.state"))
    }

    // MARK: Checkpoint

    public func checkpoint(in txn: some Transaction) throws -> UInt64 {
        try txn.get(state, "checkpoint")?.value ?? 0
    }

    /// The format the stored projections were built with; `nil` before the first build.
    public func storedFormat(in txn: some Transaction) throws -> UInt64? {
        try txn.get(state, "format")?.value
    }

    func setCheckpoint(_ sequence: UInt64, in txn: WriteTransaction) throws {
        try txn.put(state, "checkpoint", BigEndianUInt64(sequence))
    }

    /// Empties every projection and resets the checkpoint to 0.
    public func reset(in txn: WriteTransaction) throws {
        for table in tables { try txn.removeAll(table) }
        try txn.put(state, "checkpoint", BigEndianUInt64(0))
        try txn.put(state, "format", BigEndianUInt64(Self.formatVersion))
    }

    // MARK: Apply

    /// Folds one event into every projection and advances the checkpoint.
    public func apply(_ envelope: EventEnvelope, in txn: WriteTransaction) throws {
        switch envelope.stream {
        case .account(let project, let uid):
            try applyAccountEvent(envelope, project, uid, txn)
        case .project(let project):
            let before = try reader(txn).config(of: project)
            let after = Evolve.project(before, envelope.payload)
            try txn.put(projects, Keys.project(project), after.binaryEncoded)
            if after.anonymousCleanup && !before.anonymousCleanup {
                try scheduleExistingAnonymousAccounts(project, dueAt: envelope.recordedAt + anonymousCleanupDelayMilliseconds, txn)
            }
        case .oobCode(let project, let codeHash):
            let key = Keys.oobCode(project, codeHash)
            let before = try reader(txn).oobCode(codeHash, in: project)
            if let after = Evolve.oobCode(before, envelope.payload, at: envelope.recordedAt) {
                try txn.put(oobCodes, key, after.binaryEncoded)
            } else {
                try txn.delete(oobCodes, key)
            }
        }
        try setCheckpoint(envelope.sequence, in: txn)
    }

    private func applyAccountEvent(_ envelope: EventEnvelope, _ project: ProjectID, _ uid: UserID, _ txn: WriteTransaction) throws {
        let reader = reader(txn)
        let before = try reader.account(uid, in: project)
        let after = Evolve.account(before, envelope.payload, uid: uid, at: envelope.recordedAt)
        let key = Keys.account(project, uid)
        if let after {
            try txn.put(accounts, key, after.binaryEncoded)
        } else if before != nil {
            try txn.delete(accounts, key)
        }
        try updateIndex(emails, before?.email, after?.email, uid) { Keys.email(project, $0) }
        try updateIndex(phones, before?.phoneNumber, after?.phoneNumber, uid) { Keys.phone(project, $0) }
        try updateFederatedIds(project, uid, before, after, txn)
        try updateRefreshTokens(project, uid, before, after, at: envelope.recordedAt, txn)
        try updateCleanup(project, uid, before, after, reader, txn)

        func updateIndex(
            _ table: Table, _ old: String?, _ new: String?, _ uid: UserID, _ key: (String) -> [UInt8]
        ) throws {
            guard old != new else { return }
            if let old { try txn.delete(table, key(old)) }
            if let new { try txn.put(table, key(new), Array(uid.rawValue.utf8)) }
        }
    }

    private func updateFederatedIds(_ project: ProjectID, _ uid: UserID, _ before: Account?, _ after: Account?, _ txn: WriteTransaction) throws {
        let old = Set((before?.providers ?? []).map { Keys.federated(project, $0.providerId, $0.federatedId) })
        let new = Set((after?.providers ?? []).map { Keys.federated(project, $0.providerId, $0.federatedId) })
        for key in old.subtracting(new).sorted(by: { $0.lexicographicallyPrecedes($1) }) { try txn.delete(federatedIds, key) }
        for key in new.subtracting(old).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try txn.put(federatedIds, key, Array(uid.rawValue.utf8))
        }
    }

    private func updateRefreshTokens(
        _ project: ProjectID, _ uid: UserID, _ before: Account?, _ after: Account?, at: Int64, _ txn: WriteTransaction
    ) throws {
        let old = before?.refreshTokens ?? []
        let new = after?.refreshTokens ?? []
        guard old != new else { return }
        let kept = Set(new)
        for hash in old where !kept.contains(hash) { try txn.delete(refreshTokens, Array(hash.utf8)) }
        let existing = Set(old)
        for hash in new where !existing.contains(hash) {
            try txn.put(refreshTokens, Array(hash.utf8), RefreshTokenRecord(project: project, uid: uid, issuedAt: at).binaryEncoded)
        }
    }

    /// Keeps `anonymousAccounts` and the cleanup schedule in step with the account: created
    /// anonymous -> listed (and scheduled if cleanup is on); upgraded or gone -> unlisted.
    private func updateCleanup(
        _ project: ProjectID, _ uid: UserID, _ before: Account?, _ after: Account?, _ reader: ProjectionReader<WriteTransaction>,
        _ txn: WriteTransaction
    ) throws {
        let wasAnonymous = before?.isAnonymous ?? false
        let isAnonymous = after?.isAnonymous ?? false
        guard wasAnonymous != isAnonymous else { return }
        let key = Keys.account(project, uid)
        if wasAnonymous {
            if let due = try reader.cleanupDueAt(uid, in: project) {
                try txn.delete(cleanupSchedule, Keys.cleanup(project, dueAt: due, uid))
            }
            try txn.delete(anonymousAccounts, key)
        } else if let after {
            if try reader.config(of: project).anonymousCleanup {
                let due = after.createdAt + anonymousCleanupDelayMilliseconds
                try txn.put(anonymousAccounts, key, dueBytes(due))
                try txn.put(cleanupSchedule, Keys.cleanup(project, dueAt: due, uid), [])
            } else {
                try txn.put(anonymousAccounts, key, [])
            }
        }
    }

    /// Cleanup was just enabled: anonymous accounts not yet scheduled become due in 30 days.
    /// Accounts already scheduled (cleanup was on before) keep their earlier date.
    private func scheduleExistingAnonymousAccounts(_ project: ProjectID, dueAt: Int64, _ txn: WriteTransaction) throws {
        let prefix = Keys.project(project)
        var unscheduled: [[UInt8]] = []
        try txn.forEach(anonymousAccounts, prefix: prefix) { key, value in
            if value.isEmpty { unscheduled.append(Array(key)) }
            return .continue
        }
        for key in unscheduled {
            guard let uid = UserID(String(decoding: key[prefix.count...], as: UTF8.self)) else { continue }
            try txn.put(anonymousAccounts, key, dueBytes(dueAt))
            try txn.put(cleanupSchedule, Keys.cleanup(project, dueAt: dueAt, uid), [])
        }
    }

    private func dueBytes(_ due: Int64) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bitPattern: due).bigEndian) { Array($0) }
    }

    public func reader<T: Transaction>(_ txn: T) -> ProjectionReader<T> {
        ProjectionReader(projections: self, txn: txn)
    }
}
