import HearthDomain

/// Projection keys. Every key starts with the project id and a 0 byte, so one project's
/// entries are contiguous; ids never contain 0 bytes (see `UserID`, `ProjectID`).
enum Keys {
    /// `first`, a 0 byte, `second` (and a 0 byte and `third`), in one allocation.
    private static func joined(_ first: String, _ second: String, _ third: String? = nil) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(first.utf8.count + 1 + second.utf8.count + (third.map { $0.utf8.count + 1 } ?? 0))
        key.append(contentsOf: first.utf8)
        key.append(0)
        key.append(contentsOf: second.utf8)
        if let third {
            key.append(0)
            key.append(contentsOf: third.utf8)
        }
        return key
    }

    static func project(_ project: ProjectID) -> [UInt8] {
        joined(project.rawValue, "")
    }

    static func account(_ project: ProjectID, _ uid: UserID) -> [UInt8] {
        joined(project.rawValue, uid.rawValue)
    }

    static func email(_ project: ProjectID, _ email: String) -> [UInt8] {
        joined(project.rawValue, email)
    }

    static func phone(_ project: ProjectID, _ phone: String) -> [UInt8] {
        joined(project.rawValue, phone)
    }

    static func federated(_ project: ProjectID, _ providerId: ProviderID, _ federatedId: String) -> [UInt8] {
        joined(project.rawValue, providerId.rawValue, federatedId)
    }

    static func oobCode(_ project: ProjectID, _ codeHash: String) -> [UInt8] {
        joined(project.rawValue, codeHash)
    }

    /// An account's action code: project, uid, code hash.
    static func accountCode(_ project: ProjectID, _ uid: UserID, _ codeHash: String) -> [UInt8] {
        joined(project.rawValue, uid.rawValue, codeHash)
    }

    /// A code's expiry: time (big-endian, so codes sort by it), project, code hash.
    static func codeExpiry(_ expiresAt: Int64, _ project: ProjectID, _ codeHash: String) -> [UInt8] {
        withUnsafeBytes(of: UInt64(bitPattern: max(0, expiresAt)).bigEndian) { Array($0) } + joined(project.rawValue, codeHash)
    }

    /// What every `accountCode` key of the account starts with.
    static func accountCodes(_ project: ProjectID, _ uid: UserID) -> [UInt8] {
        account(project, uid) + [0]
    }

    /// Purges per day: project, day number (big-endian, so days sort).
    static func purgeDay(_ project: ProjectID, day: Int64) -> [UInt8] {
        var key = self.project(project)
        withUnsafeBytes(of: UInt64(bitPattern: day).bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// Cleanup schedule: ordered by due time within a project.
    static func cleanup(_ project: ProjectID, dueAt: Int64, _ uid: UserID) -> [UInt8] {
        var key = self.project(project)
        withUnsafeBytes(of: UInt64(bitPattern: dueAt).bigEndian) { key.append(contentsOf: $0) }
        key.append(contentsOf: uid.rawValue.utf8)
        return key
    }

    /// An account in a listing: project, the order (0 creation, 1 last sign-in), the time
    /// (big-endian, so accounts sort by it; before 1970 counts as 1970), uid.
    static func listing(_ project: ProjectID, _ order: AccountListOrder, _ time: Int64, _ uid: UserID) -> [UInt8] {
        var key = listing(project, order)
        withUnsafeBytes(of: UInt64(bitPattern: max(0, time)).bigEndian) { key.append(contentsOf: $0) }
        key.append(contentsOf: uid.rawValue.utf8)
        return key
    }

    /// What every key of one of a project's listings starts with.
    static func listing(_ project: ProjectID, _ order: AccountListOrder) -> [UInt8] {
        self.project(project) + [order == .creation ? 0 : 1]
    }

    /// A count's key: project, then 0 (accounts); 1 and a provider name; or 2, a day
    /// (big-endian, so a project's days sort) and 0 for sign-ups, 1 for sign-ins.
    static func tally(_ tally: Tally) -> [UInt8] {
        switch tally {
        case .accounts(let project): return self.project(project) + [0]
        case .provider(let project, let name): return providers(project) + Array(name.utf8)
        case .signUps(let project, let day): return activity(project, day: day, kind: 0)
        case .signIns(let project, let day): return activity(project, day: day, kind: 1)
        }
    }

    static func providers(_ project: ProjectID) -> [UInt8] { self.project(project) + [1] }

    /// The counts of a day: project, 2, the day.
    static func activity(_ project: ProjectID, day: Int64, kind: UInt8) -> [UInt8] {
        var key = self.project(project) + [2]
        withUnsafeBytes(of: UInt64(bitPattern: day).bigEndian) { key.append(contentsOf: $0) }
        key.append(kind)
        return key
    }

    /// What every day's count of a project starts with.
    static func activity(_ project: ProjectID) -> [UInt8] { self.project(project) + [2] }
}
