import HearthDomain
import HearthLedger
import LMDB

/// Queries over the projections inside one transaction. In the writer's transaction it is
/// the `DecisionState` that `decide` reads; in a read transaction it serves the API and tools.
public struct ProjectionReader<T: Transaction>: DecisionState {
    public let projections: Projections
    public let txn: T

    private func decoded<V: BinaryDecodable>(_ table: Projections.Table, _ key: [UInt8]) throws -> V? {
        try txn.withValue(table, forKey: key) { bytes in try bytes.map { try V(binary: $0) } }
    }

    private func uid(_ table: Projections.Table, _ key: [UInt8]) throws -> UserID? {
        try txn.withValue(table, forKey: key) { bytes in bytes.flatMap { UserID(String(decoding: $0, as: UTF8.self)) } }
    }

    public func account(_ uid: UserID, in project: ProjectID) throws -> Account? {
        try decoded(projections.accounts, Keys.account(project, uid))
    }

    public func owner(ofEmail email: String, in project: ProjectID) throws -> UserID? {
        try uid(projections.emails, Keys.email(project, normalizeEmail(email)))
    }

    public func owner(ofProvider providerId: ProviderID, federatedId: String, in project: ProjectID) throws -> UserID? {
        try uid(projections.federatedIds, Keys.federated(project, providerId, federatedId))
    }

    public func owner(ofPhone phoneNumber: String, in project: ProjectID) throws -> UserID? {
        try uid(projections.phones, Keys.phone(project, phoneNumber))
    }

    public func config(of project: ProjectID) throws -> ProjectConfig {
        try recordedConfig(of: project) ?? ProjectConfig()
    }

    /// The project's settings if any change to them was ever recorded.
    public func recordedConfig(of project: ProjectID) throws -> ProjectConfig? {
        try decoded(projections.projects, Keys.project(project))
    }

    public func oobCode(_ codeHash: String, in project: ProjectID) throws -> OOBCode? {
        try decoded(projections.oobCodes, Keys.oobCode(project, codeHash))
    }

    public func cleanupSchedule(_ uid: UserID, in project: ProjectID) throws -> CleanupSchedule? {
        try txn.withValue(projections.anonymousAccounts, forKey: Keys.account(project, uid)) { bytes in
            guard let bytes, !bytes.isEmpty else { return nil }
            var reader = ByteReader(bytes)
            return try CleanupSchedule(from: &reader)
        }
    }

    public func refreshToken(hash: String) throws -> RefreshTokenRecord? {
        try decoded(projections.refreshTokens, Array(hash.utf8))
    }

    /// Accounts of `project` linked to `providerId`, in federated-id order (a prefix scan of
    /// the federated-id index).
    public func accounts(linkedTo providerId: ProviderID, in project: ProjectID, limit: Int) throws -> [Account] {
        var uids: [UserID] = []
        try txn.forEach(projections.federatedIds, prefix: Keys.federated(project, providerId, "")) { _, value in
            if let uid = UserID(String(decoding: value, as: UTF8.self)) { uids.append(uid) }
            return uids.count < limit ? .continue : .stop
        }
        return try uids.compactMap { try account($0, in: project) }
    }

    /// Accounts the project's cleanup would newly schedule if it were enabled now: anonymous
    /// accounts without a due date (the "how many would be affected" preview).
    public func unscheduledAnonymousAccounts(in project: ProjectID) throws -> Int {
        var count = 0
        try txn.forEach(projections.anonymousAccounts, prefix: Keys.project(project)) { _, value in
            if value.isEmpty { count += 1 }
            return .continue
        }
        return count
    }

    /// Anonymous accounts of `project` due for cleanup at `now`, earliest first.
    /// Codes neither used nor swept, in expiry order: each one's expiry, project and code hash,
    /// until `body` says stop.
    public func forEachCodeByExpiry(_ body: (_ expiresAt: Int64, _ project: ProjectID, _ codeHash: String) throws -> Bool) throws {
        try txn.forEach(projections.codeExpiry) { key, _ in
            guard key.count > 9, let separator = key[8...].firstIndex(of: 0) else { return .continue }
            let expiresAt = Int64(bitPattern: try BigEndianUInt64(decoding: UnsafeRawBufferPointer(rebasing: key[..<8])).value)
            guard let project = ProjectID(String(decoding: UnsafeRawBufferPointer(rebasing: key[8..<separator]), as: UTF8.self))
            else { return .continue }
            let codeHash = String(decoding: UnsafeRawBufferPointer(rebasing: key[(separator + 1)...]), as: UTF8.self)
            return try body(expiresAt, project, codeHash) ? .continue : .stop
        }
    }

    public func accountsDueForCleanup(in project: ProjectID, now: Int64, limit: Int) throws -> [UserID] {
        var due: [UserID] = []
        try forEachScheduled(in: project) { dueAt, uid in
            guard dueAt <= now, due.count < limit else { return .stop }
            due.append(uid)
            return .continue
        }
        return due
    }

    /// The cleanup schedule of `project` in due order: each account's due time and uid.
    public func forEachScheduled(
        in project: ProjectID, _ body: (_ dueAt: Int64, _ uid: UserID) throws -> IterationControl
    ) throws {
        let prefix = Keys.project(project)
        try txn.forEach(projections.cleanupSchedule, prefix: prefix) { key, _ in
            guard key.count > prefix.count + 8 else { return .continue }
            let dueBytes = UnsafeRawBufferPointer(rebasing: key[prefix.count..<prefix.count + 8])
            let dueAt = Int64(bitPattern: try BigEndianUInt64(decoding: dueBytes).value)
            guard let uid = UserID(String(decoding: key[(prefix.count + 8)...], as: UTF8.self)) else { return .continue }
            return try body(dueAt, uid)
        }
    }

    /// Projects that have settings of their own (every project cleanup was ever turned on for).
    public func configuredProjects() throws -> [ProjectID] {
        var projects: [ProjectID] = []
        try txn.forEach(projections.projects) { key, _ in
            if let project = ProjectID(String(decoding: key.prefix { $0 != 0 }, as: UTF8.self)) { projects.append(project) }
            return .continue
        }
        return projects
    }

    /// Accounts of `project` cleanup purged per UTC day (days since 1970), from `firstDay` on.
    public func purgesByDay(in project: ProjectID, from firstDay: Int64) throws -> [(day: Int64, purged: Int)] {
        var days: [(day: Int64, purged: Int)] = []
        let prefix = Keys.project(project)
        try txn.forEach(projections.cleanupPurges, from: Keys.purgeDay(project, day: firstDay)) { key, value in
            guard key.starts(with: prefix), key.count == prefix.count + 8 else { return .stop }
            let day = Int64(bitPattern: try BigEndianUInt64(decoding: UnsafeRawBufferPointer(rebasing: key[prefix.count...])).value)
            days.append((day, Int(try BigEndianUInt64(decoding: value).value)))
            return .continue
        }
        return days
    }

    /// The earliest cleanup due time of `project`, if any account is scheduled.
    public func nextCleanupDue(in project: ProjectID) throws -> Int64? {
        var next: Int64?
        try forEachScheduled(in: project) { dueAt, _ in
            next = dueAt
            return .stop
        }
        return next
    }

    public func accountCount() throws -> Int { try txn.count(projections.accounts) }

    /// Accounts of one project (kept as a count, not counted).
    public func accountCount(in project: ProjectID) throws -> Int {
        try txn.withValue(projections.counts, forKey: Keys.tally(.accounts(project))) { bytes in
            try bytes.map { Int(try BigEndianUInt64(decoding: $0).value) } ?? 0
        }
    }

    /// Up to `limit` accounts of `project` in uid order, starting after `uid` (paging), past the
    /// first `skipping` of those (stepped over, not decoded).
    public func accounts(in project: ProjectID, after uid: UserID? = nil, skipping: Int = 0, limit: Int) throws -> [Account] {
        let prefix = Keys.project(project)
        let start = uid.map { Keys.account(project, $0) } ?? prefix
        var page: [Account] = []
        guard limit > 0 else { return page }
        var skipped = 0
        try txn.withCursor(projections.accounts) { cursor in
            var entry = try cursor.seek(atLeast: start)
            while let (key, value) = entry, key.starts(with: prefix) {
                if key.elementsEqual(start) {
                    // the page token's own account
                } else if skipped < skipping {
                    skipped += 1
                } else {
                    page.append(try Account(binary: value))
                    if page.count == limit { return }
                }
                entry = try cursor.next()
            }
        }
        return page
    }

    /// Up to `limit` accounts of `project`, the most recent first by `order` (creation, last
    /// sign-in: those that never signed in are not listed then), after `position` (paging: the
    /// time and uid of the last account of the page before).
    public func accounts(
        in project: ProjectID, newestBy order: AccountListOrder, after position: (time: Int64, uid: UserID)?, limit: Int
    ) throws -> [Account] {
        let table = projections.accountListings
        let prefix = Keys.listing(project, order)
        // Past every key of the listing: UTF-8 never holds a 0xFF byte.
        let start = position.map { Keys.listing(project, order, $0.time, $0.uid) } ?? prefix + [UInt8](repeating: 0xFF, count: 9)
        var uids: [UserID] = []
        guard limit > 0 else { return [] }
        try txn.withCursor(table) { cursor in
            var entry = try cursor.seek(atMost: start)
            while let (key, _) = entry, key.starts(with: prefix) {
                if !key.elementsEqual(start), let uid = UserID(String(decoding: key[(prefix.count + 8)...], as: UTF8.self)) {
                    uids.append(uid)
                    if uids.count == limit { return }
                }
                entry = try cursor.previous()
            }
        }
        return try uids.compactMap { try account($0, in: project) }
    }

    /// Up to `limit` accounts of `project` whose email starts with `prefix` (case aside), in
    /// email order, after the account with the email `after` (paging).
    public func accounts(in project: ProjectID, emailPrefix prefix: String, after: String?, limit: Int) throws -> [Account] {
        let prefixKey = Keys.email(project, normalizeEmail(prefix))
        let start = after.map { Keys.email(project, normalizeEmail($0)) } ?? prefixKey
        var uids: [UserID] = []
        guard limit > 0 else { return [] }
        try txn.withCursor(projections.emails) { cursor in
            var entry = try cursor.seek(atLeast: start)
            while let (key, value) = entry, key.starts(with: prefixKey) {
                if !(after != nil && key.elementsEqual(start)), let uid = UserID(String(decoding: value, as: UTF8.self)) {
                    uids.append(uid)
                    if uids.count == limit { return }
                }
                entry = try cursor.next()
            }
        }
        return try uids.compactMap { try account($0, in: project) }
    }

    /// How many of the project's accounts sign in with each provider, the most used first.
    public func providerCounts(in project: ProjectID) throws -> [ProviderCount] {
        let prefix = Keys.providers(project)
        var counts: [ProviderCount] = []
        try txn.forEach(projections.counts, prefix: prefix) { key, value in
            let count = Int(try BigEndianUInt64(decoding: value).value)
            counts.append(ProviderCount(provider: String(decoding: key[prefix.count...], as: UTF8.self), accounts: count))
            return .continue
        }
        return counts.sorted { $0.accounts != $1.accounts ? $0.accounts > $1.accounts : $0.provider < $1.provider }
    }

    /// The project's sign-ups and sign-ins per UTC day, from `firstDay` on (days without either
    /// left out).
    public func activity(in project: ProjectID, from firstDay: Int64) throws -> [DailyActivity] {
        let prefix = Keys.activity(project)
        var days: [DailyActivity] = []
        try txn.forEach(projections.counts, from: Keys.activity(project, day: max(0, firstDay), kind: 0)) { key, value in
            guard key.starts(with: prefix), key.count == prefix.count + 9 else { return .stop }
            let day = Int64(
                bitPattern: try BigEndianUInt64(decoding: UnsafeRawBufferPointer(rebasing: key[prefix.count..<(prefix.count + 8)])).value)
            let count = Int(try BigEndianUInt64(decoding: value).value)
            if days.last?.day != day { days.append(DailyActivity(day: day, signUps: 0, signIns: 0)) }
            if key[prefix.count + 8] == 0 { days[days.count - 1].signUps = count } else { days[days.count - 1].signIns = count }
            return .continue
        }
        return days
    }
}
