import HearthDomain
import HearthLedger

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An account projection key: which account of which project.
struct AccountKey: Hashable, Sendable {
    var project: ProjectID
    var uid: UserID
}

/// The index tables an account event can change.
enum IndexTable: Sendable {
    case emails, phones, federatedIds, refreshTokens, accountListings
}

/// One change to an index table that an account event implies, applied in event order.
enum IndexOp: Sendable {
    case put(IndexTable, key: [UInt8], value: [UInt8])
    case delete(IndexTable, key: [UInt8])
    /// The account became anonymous (created at `since`) or stopped being so (`nil`). Whether
    /// it is scheduled for cleanup depends on the project's configuration, which the writer holds.
    case anonymous(AccountKey, since: Int64?)
    /// Cleanup purged an account of `project` on this UTC day (days since 1970): counted per day.
    case purged(ProjectID, day: Int64)
    /// The account ended: its unused action codes go with it (their addresses were sealed under
    /// its key, destroyed with it).
    case endCodes(AccountKey)
}

/// A count the projections keep, which account events move up or down. Counts commute, so a
/// fold tallies them and the writer applies the sums once per job or chunk.
enum Tally: Hashable, Sendable {
    /// Accounts of a project.
    case accounts(ProjectID)
    /// A project's accounts that sign in with this provider (`password`, `phone`,
    /// `anonymous`, or a provider id).
    case provider(ProjectID, String)
    /// A project's accounts created, or sign-ins, on a UTC day (days since 1970).
    case signUps(ProjectID, day: Int64)
    case signIns(ProjectID, day: Int64)
}

/// An account as a fold last loaded or left it, with its record key.
struct CachedAccount: Sendable {
    var id: AccountKey
    var key: [UInt8]
    var account: Account?
    /// The account as loaded (nil: created here): what the listings and counts held for it.
    var original: Account?
    var changed = false
}

/// The accounts a fold ended with: what it changed, for the writer to store in key order,
/// and, in a rebuild, what the next chunks read before the (not yet committed) projections.
struct FoldedAccounts: Sendable {
    fileprivate var slots: [AccountKey: Int] = [:]
    fileprivate var accounts: [CachedAccount] = []
    /// The counts' changes (none zero).
    fileprivate(set) var tallies: [Tally: Int64] = [:]
    /// The listings' changes (by creation, by last sign-in), one pair per account however many
    /// of its events the fold saw.
    fileprivate(set) var listingOps: [IndexOp] = []

    /// `nil` if the fold never saw the account; `.some(nil)` if it ended it.
    func account(_ key: AccountKey) -> Account?? {
        guard let slot = slots[key] else { return nil }
        return .some(accounts[slot].account)
    }

    /// Visits the changed accounts in record-key order (sorted here, on the writer's side of a
    /// rebuild, not by the fold): the record key, and the account (nil once gone).
    func forEachChanged(_ body: ([UInt8], Account?) throws -> Void) rethrows {
        try accounts.withUnsafeBufferPointer { accounts in
            let changed = accounts.indices.filter { accounts[$0].changed }.sorted { left, right in
                accounts[left].key.withUnsafeBytes { l in
                    accounts[right].key.withUnsafeBytes { r in
                        let common = memcmp(l.baseAddress!, r.baseAddress!, min(l.count, r.count))
                        return common != 0 ? common < 0 : l.count < r.count
                    }
                }
            }
            for slot in changed { try body(accounts[slot].key, accounts[slot].account) }
        }
    }
}

/// The account half of projecting: folds account events into cached accounts and turns what
/// each event changed into index operations. It touches no database itself: accounts it has
/// not cached come from `load`. So the live writer runs it inside its transaction, and a
/// rebuild runs it on another core while the writer thread stores the previous chunk.
///
/// Each account is decoded at most once and handed back once, at `finish`: an account touched
/// by many events of a write job or rebuild chunk is not re-encoded per event.
final class AccountFold {
    /// What the indexes derive from, captured before an event so its changes can be diffed.
    /// Holding the arrays costs a retain; they are copied only if the event changes them.
    private struct IndexedFields {
        var email: String?
        var phoneNumber: String?
        var providers: [ProviderLink]
        var refreshTokens: [String]
        var isAnonymous: Bool
    }

    private let load: (AccountKey) throws -> Account?
    // Unchecked: a fold runs on one thread and `load` never re-enters it, and checking every
    // access at run time was a tenth of a rebuild's fold.
    @exclusivity(unchecked) private var slots: [AccountKey: Int] = [:]
    @exclusivity(unchecked) private var accounts: [CachedAccount] = []
    /// The slot used last: an account's events mostly come together (a sign-in is two).
    @exclusivity(unchecked) private var lastSlot = 0
    @exclusivity(unchecked) private var tallies: [Tally: Int64] = [:]
    @exclusivity(unchecked) private var activity = ActivityRun()

    /// `capacity`: how many events the fold expects, an upper bound on its accounts.
    init(capacity: Int = 0, load: @escaping (AccountKey) throws -> Account?) {
        self.load = load
        slots.reserveCapacity(capacity)
        accounts.reserveCapacity(capacity)
    }

    /// The account as the events folded so far left it, else as `load` gives it.
    func account(_ key: AccountKey) throws -> Account? {
        accounts[try slot(key, creating: false)].account
    }

    /// Folds one event of `key`'s stream and appends the index changes it implies to `ops`.
    func apply(_ payload: EventPayload, at recordedAt: Int64, to key: AccountKey, ops: inout [IndexOp]) throws {
        let creating = if case .accountCreated = payload { true } else { false }
        let slot = try slot(key, creating: creating)
        let before = indexedFields(slot)
        Evolve.apply(payload, to: &accounts[slot].account, uid: key.uid, at: recordedAt)
        accounts[slot].changed = true
        let after = indexedFields(slot)
        let project = key.project
        let uid = key.uid
        switch payload {
        case .accountCreated: activity.count(project, day: recordedAt / 86_400_000, signIn: false, into: &tallies)
        case .signInRecorded: activity.count(project, day: recordedAt / 86_400_000, signIn: true, into: &tallies)
        default: break
        }
        index(.emails, before.email, after.email, uid, &ops) { Keys.email(project, $0) }
        index(.phones, before.phoneNumber, after.phoneNumber, uid, &ops) { Keys.phone(project, $0) }
        if before.providers != after.providers { indexFederatedIds(key, before.providers, after.providers, &ops) }
        if before.refreshTokens != after.refreshTokens {
            // Only v1 tokens, which do not name their account, need the token-hash index.
            let unnamed = if case .refreshTokenIssued(let issued) = payload, !issued.namesAccount { issued.tokenHash } else { String?.none }
            indexRefreshTokens(key, before.refreshTokens, after.refreshTokens, indexing: unnamed, at: recordedAt, &ops)
        }
        if before.isAnonymous != after.isAnonymous {
            ops.append(.anonymous(key, since: after.isAnonymous ? accounts[slot].account?.createdAt : nil))
        }
        if case .anonymousPurged = payload { ops.append(.purged(project, day: recordedAt / 86_400_000)) }
        if PersonalData.forgets(payload) { ops.append(.endCodes(key)) }
    }

    /// Ends the fold: hands over its accounts and starts again empty.
    /// The listings and counts follow each account from as it was loaded to as the fold left
    /// it: computed here once per account, not per event (a sign-in would otherwise move it in
    /// the sign-in listing twice a session).
    func finish() -> FoldedAccounts {
        activity.flush(into: &tallies)
        var listingOps: [IndexOp] = []
        for cached in accounts where cached.changed {
            let (key, before, after) = (cached.id, cached.original, cached.account)
            let project = key.project
            if (before == nil) != (after == nil) { tallies[.accounts(project), default: 0] += after == nil ? -1 : 1 }
            Self.list(.creation, before?.createdAt, after?.createdAt, key, &listingOps)
            Self.list(.lastSignIn, before?.lastSignInAt, after?.lastSignInAt, key, &listingOps)
            let (old, new) = (Self.providerNames(before), Self.providerNames(after))
            if old != new {
                for name in old where !new.contains(name) { tallies[.provider(project, name), default: 0] -= 1 }
                for name in new where !old.contains(name) { tallies[.provider(project, name), default: 0] += 1 }
            }
        }
        let folded = FoldedAccounts(
            slots: slots, accounts: accounts, tallies: tallies.filter { $0.value != 0 }, listingOps: listingOps)
        slots = [:]
        accounts = []
        tallies = [:]
        lastSlot = 0
        return folded
    }

    /// Moves an account in a time-ordered listing (creation, last sign-in).
    private static func list(_ order: AccountListOrder, _ old: Int64?, _ new: Int64?, _ key: AccountKey, _ ops: inout [IndexOp]) {
        guard old != new else { return }
        if let old { ops.append(.delete(.accountListings, key: Keys.listing(key.project, order, old, key.uid))) }
        if let new { ops.append(.put(.accountListings, key: Keys.listing(key.project, order, new, key.uid), value: [])) }
    }

    /// The providers an account signs in with, as the console names them.
    private static func providerNames(_ account: Account?) -> [String] {
        guard let account else { return [] }
        var names = account.providers.map(\.providerId.rawValue)
        if account.password != nil || account.emailLinkSignIn { names.append("password") }
        if account.phoneNumber != nil { names.append("phone") }
        if account.isAnonymous { names.append("anonymous") }
        return names
    }

    /// The cache slot of an account, loaded on first use. A creation needs no load: a stream
    /// is created only when it has no account (new, or deleted before).
    private func slot(_ key: AccountKey, creating: Bool) throws -> Int {
        if lastSlot < accounts.count && accounts[lastSlot].id == key { return lastSlot }
        if let slot = slots[key] {
            lastSlot = slot
            return slot
        }
        let stored = creating ? nil : try load(key)
        accounts.append(CachedAccount(id: key, key: Keys.account(key.project, key.uid), account: stored, original: stored))
        lastSlot = accounts.count - 1
        slots[key] = lastSlot
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

    private func index(
        _ table: IndexTable, _ old: String?, _ new: String?, _ uid: UserID, _ ops: inout [IndexOp],
        _ key: (String) -> [UInt8]
    ) {
        guard old != new else { return }
        if let old { ops.append(.delete(table, key: key(old))) }
        if let new { ops.append(.put(table, key: key(new), value: Array(uid.rawValue.utf8))) }
    }

    private func indexFederatedIds(_ key: AccountKey, _ before: [ProviderLink], _ after: [ProviderLink], _ ops: inout [IndexOp]) {
        // A few links per account, one per provider: linear scans beat building sets. Compared
        // as bytes, like the keys they make (String == would equate Unicode-equivalent ids).
        func holds(_ links: [ProviderLink], _ link: ProviderLink) -> Bool {
            links.contains {
                $0.providerId.rawValue.utf8.elementsEqual(link.providerId.rawValue.utf8)
                    && $0.federatedId.utf8.elementsEqual(link.federatedId.utf8)
            }
        }
        for link in before where !holds(after, link) {
            ops.append(.delete(.federatedIds, key: Keys.federated(key.project, link.providerId, link.federatedId)))
        }
        for link in after where !holds(before, link) {
            let bytes = Keys.federated(key.project, link.providerId, link.federatedId)
            ops.append(.put(.federatedIds, key: bytes, value: Array(key.uid.rawValue.utf8)))
        }
    }

    /// Retired tokens leave the index (a token that names its account was never in it);
    /// `indexing`, a v1 token just issued, enters it.
    private func indexRefreshTokens(
        _ key: AccountKey, _ old: [String], _ new: [String], indexing: String?, at: Int64, _ ops: inout [IndexOp]
    ) {
        // At most `Evolve.maxRefreshTokensPerAccount` each: linear scans beat building sets.
        for hash in old where !new.contains(hash) { ops.append(.delete(.refreshTokens, key: Array(hash.utf8))) }
        guard let indexing, new.contains(indexing), !old.contains(indexing) else { return }
        let record = RefreshTokenRecord(project: key.project, uid: key.uid, issuedAt: at).binaryEncoded
        ops.append(.put(.refreshTokens, key: Array(indexing.utf8), value: record))
    }
}

/// Sign-ups and sign-ins of one project and day, counted in place while events come in that
/// order (they mostly do), and added to the tallies when another project or day begins: a
/// dictionary update per event would cost a string hash each.
struct ActivityRun {
    private var project: ProjectID?
    private var day: Int64 = 0
    private var signUps: Int64 = 0
    private var signIns: Int64 = 0

    mutating func count(_ project: ProjectID, day: Int64, signIn: Bool, into tallies: inout [Tally: Int64]) {
        if self.project != project || self.day != day {
            flush(into: &tallies)
            self.project = project
            self.day = day
        }
        if signIn { signIns += 1 } else { signUps += 1 }
    }

    mutating func flush(into tallies: inout [Tally: Int64]) {
        guard let project else { return }
        if signUps > 0 { tallies[.signUps(project, day: day), default: 0] += signUps }
        if signIns > 0 { tallies[.signIns(project, day: day), default: 0] += signIns }
        self.project = nil
        signUps = 0
        signIns = 0
    }
}
