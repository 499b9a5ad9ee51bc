import HearthDomain
import HearthLedger
import LMDB

/// The read models, each a pure fold of the ledger, applied in the same transaction as the
/// append (so they are never behind it) and rebuildable from sequence 0 to the same bytes.
public struct Projections: Sendable {
    /// Bump when a record layout or index changes: the daemon then rebuilds on start.
    /// 5: cleanup schedules record their rule; project configs their cleanup period and
    /// email privacy; purges are counted per day. 6: accounts keep their initial email.
    /// 7: project configs keep their apps' Team IDs and signing certificates. 8: a used action
    /// code keeps no address (its key is destroyed; `PersonalData`), and an account's unused
    /// codes end with it (`account_codes`); codes are listed by expiry for the sweep (`code_expiry`).
    /// 10: accounts are listed by creation and by last sign-in (`account_listings`), and counted
    /// per project, per provider and (sign-ups, sign-ins) per day (`counts`), for the console.
    public static let formatVersion: UInt64 = 10

    public typealias Table = Database<[UInt8], [UInt8]>

    /// project, uid -> `Account`
    public let accounts: Table
    /// project, email -> uid
    public let emails: Table
    /// project, phone -> uid
    public let phones: Table
    /// project, provider id, federated id -> uid
    public let federatedIds: Table
    /// project, uid -> `CleanupSchedule`, or empty while cleanup has not scheduled it
    public let anonymousAccounts: Table
    /// project, due time, uid -> empty: the anonymous-cleanup schedule, in due order
    public let cleanupSchedule: Table
    /// project, UTC day -> accounts cleanup purged that day (8 bytes)
    public let cleanupPurges: Table
    /// token hash -> `RefreshTokenRecord`, for v1 refresh tokens only (v2 tokens name their account)
    public let refreshTokens: Table
    /// project, code hash -> `OOBCode`
    public let oobCodes: Table
    /// project, uid, code hash -> empty: an account's unused codes, which end with it
    public let accountCodes: Table
    /// expiry time, project, code hash -> empty: codes not yet used or swept, in expiry order
    public let codeExpiry: Table
    /// project -> `ProjectConfig`
    public let projects: Table
    /// project, 0 (by creation) or 1 (by last sign-in), the time (8 bytes, big-endian), uid ->
    /// empty: accounts in the order of their creation, and those that signed in in the order of
    /// their last sign-in. One table for both, and one for the counts: each table a write
    /// transaction touches is more pages to write at its commit.
    public let accountListings: Table
    /// project, then 0 -> its accounts; 1, provider name -> accounts that sign in with it;
    /// 2, UTC day (8 bytes, big-endian), 0 or 1 -> that day's sign-ups or sign-ins (8 bytes each)
    public let counts: Table
    /// "checkpoint" -> last applied sequence; "format" -> `formatVersion`; "term" -> the
    /// latest `cluster.term_started`'s term
    public let state: Database<String, BigEndianUInt64>

    /// Every table whose bytes the digest covers, in digest order.
    public var tables: [Table] {
        [
            accounts, emails, phones, federatedIds, anonymousAccounts, cleanupSchedule, cleanupPurges, refreshTokens, oobCodes,
            accountCodes, codeExpiry, projects, accountListings, counts,
        ]
    }

    public static func open(_ environment: Environment) throws -> Projections {
        func table(_ name: String) throws -> Table { try environment.openDatabase(named: "projection.\(name)") }
        return Projections(
            accounts: try table("accounts"), emails: try table("emails"), phones: try table("phones"),
            federatedIds: try table("federated_ids"), anonymousAccounts: try table("anonymous_accounts"),
            cleanupSchedule: try table("cleanup_schedule"), cleanupPurges: try table("cleanup_purges"),
            refreshTokens: try table("refresh_tokens"),
            oobCodes: try table("oob_codes"), accountCodes: try table("account_codes"),
            codeExpiry: try table("code_expiry"), projects: try table("projects"),
            accountListings: try table("account_listings"), counts: try table("counts"),
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

    /// The latest term the ledger recorded the start of; `nil` before the first.
    public func term(in txn: some Transaction) throws -> UInt64? {
        try txn.get(state, "term")?.value
    }

    func setTerm(_ term: UInt64, in txn: WriteTransaction) throws {
        try txn.put(state, "term", BigEndianUInt64(term))
    }

    /// Empties every projection and resets the checkpoint to 0.
    public func reset(in txn: WriteTransaction) throws {
        for table in tables { try txn.removeAll(table) }
        try txn.delete(state, "term")
        try txn.put(state, "checkpoint", BigEndianUInt64(0))
        try txn.put(state, "format", BigEndianUInt64(Self.formatVersion))
    }

    /// A writer that folds events into the projections inside `txn`.
    public func writer(_ txn: WriteTransaction) -> ProjectionWriter {
        ProjectionWriter(projections: self, txn: txn)
    }

    public func reader<T: Transaction>(_ txn: T) -> ProjectionReader<T> {
        ProjectionReader(projections: self, txn: txn)
    }
}
