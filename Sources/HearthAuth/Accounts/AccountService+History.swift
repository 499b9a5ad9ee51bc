import HearthDomain
import HearthStore

/// An account's ledger, for the people who run a project (the console): every event of its
/// stream, and the account as it was at any moment, from the same fold as `hearth audit show`.
extension AccountService {
    /// The longest history a page shows: its most recent events.
    public static let historyPageLimit = 2000

    /// The account's events, oldest first (the most recent `historyPageLimit`, read through the
    /// stream index without the older ones), and how many there are in all. Admins only; an
    /// account deleted long ago keeps its history.
    public func history(of uid: UserID, _ caller: Caller) throws -> (entries: [LedgerEntry], total: Int) {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        let (events, total) = try store.audit.events(of: .account(caller.project, uid), last: Self.historyPageLimit)
        return (try events.map(LedgerEntry.init), Int(total))
    }

    /// Whether the uid ever had an account in the project (deleted and purged ones included).
    public func hasHistory(_ uid: UserID, _ caller: Caller) throws -> Bool {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return try store.audit.hasEvents(.account(caller.project, uid))
    }

    /// The account as of `time` (Unix ms): `nil` if it did not exist then (not yet, or deleted).
    /// Erased personal fields stay empty.
    public func account(_ uid: UserID, asOf time: Int64, _ caller: Caller) throws -> Account? {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return try store.audit.account(uid, in: caller.project, at: time).account
    }

    /// When the anonymous cleanup will purge the account, and by which rule (`nil`: not scheduled).
    public func cleanupSchedule(of uid: UserID, _ caller: Caller) throws -> CleanupSchedule? {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return try read { try $0.cleanupSchedule(uid, in: caller.project) }
    }

    /// The project's accounts at a glance: how many, by provider, and the sign-ups and sign-ins
    /// of the last `days` days (today included).
    public func overview(days: Int64, _ caller: Caller) throws -> AccountOverview {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        let today = now / DayCount.millisecondsPerDay
        return try read { try $0.overview(of: caller.project, from: today - days + 1) }
    }
}
