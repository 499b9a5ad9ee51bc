import HearthDomain

/// A second, deliberately simple implementation of the read model: dictionaries folded with
/// `Evolve`, linear scans for lookups. Domain tests decide against it; model-based tests
/// compare it with the LMDB projections.
public struct InMemoryState: DecisionState, Sendable {
    public struct Key: Hashable, Sendable {
        public var project: ProjectID
        public var uid: UserID
    }

    public var accounts: [Key: Account] = [:]
    public var configs: [ProjectID: ProjectConfig] = [:]
    public var oobCodes: [String: OOBCode] = [:]
    /// Cleanup schedules of anonymous accounts (absent = listed but not scheduled).
    public var cleanupDue: [Key: CleanupSchedule] = [:]

    public init() {}

    /// Folds one event, the way the projections do.
    public mutating func apply(_ stream: StreamID, _ payload: EventPayload, at: Int64) {
        switch stream {
        case .account(let project, let uid):
            let key = Key(project: project, uid: uid)
            let before = accounts[key]
            let after = Evolve.account(before, payload, uid: uid, at: at)
            accounts[key] = after
            if before?.isAnonymous == true && after?.isAnonymous != true { cleanupDue[key] = nil }
            if before?.isAnonymous != true, let after, after.isAnonymous, let config = configs[project], config.anonymousCleanup {
                cleanupDue[key] = CleanupSchedule(
                    dueAt: after.createdAt + config.anonymousCleanupDelay, rule: .createdWhileCleanupOn, since: after.createdAt)
            }
        case .project(let project):
            let before = configs[project] ?? ProjectConfig()
            let after = Evolve.project(before, payload)
            configs[project] = after
            if after.anonymousCleanup && !before.anonymousCleanup {
                for (key, account) in accounts where key.project == project && account.isAnonymous && cleanupDue[key] == nil {
                    cleanupDue[key] = CleanupSchedule(
                        dueAt: at + after.anonymousCleanupDelay, rule: .existedWhenCleanupTurnedOn, since: at)
                }
            }
        case .oobCode(_, let hash):
            oobCodes[hash] = Evolve.oobCode(oobCodes[hash], payload, at: at)
        case .cluster:
            break
        }
    }

    /// Decides and, if accepted, applies: the whole write path without storage.
    @discardableResult
    public mutating func execute(_ command: Command, now: Int64) throws -> [EventPayload] {
        let events = try Decide.decide(command, state: self, now: now)
        for event in events { apply(command.stream, event, at: now) }
        return events
    }

    public func account(_ uid: UserID, in project: ProjectID) -> Account? {
        accounts[Key(project: project, uid: uid)]
    }

    public func owner(ofEmail email: String, in project: ProjectID) -> UserID? {
        accounts.first { $0.key.project == project && $0.value.email == normalizeEmail(email) }?.key.uid
    }

    public func owner(ofProvider providerId: ProviderID, federatedId: String, in project: ProjectID) -> UserID? {
        accounts.first { entry in
            entry.key.project == project
                && entry.value.providers.contains { $0.providerId == providerId && $0.federatedId == federatedId }
        }?.key.uid
    }

    public func owner(ofPhone phoneNumber: String, in project: ProjectID) -> UserID? {
        accounts.first { $0.key.project == project && $0.value.phoneNumber == phoneNumber }?.key.uid
    }

    public func config(of project: ProjectID) -> ProjectConfig { configs[project] ?? ProjectConfig() }

    public func oobCode(_ codeHash: String, in project: ProjectID) -> OOBCode? { oobCodes[codeHash] }

    public func cleanupSchedule(_ uid: UserID, in project: ProjectID) -> CleanupSchedule? {
        cleanupDue[Key(project: project, uid: uid)]
    }
}
