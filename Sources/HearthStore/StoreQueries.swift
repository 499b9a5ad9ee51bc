import HearthDomain

/// The `DecisionState` queries, answered alike by a read snapshot (`StoreReader`) and by a write
/// job (`StoreTransaction`, which sees its own commands' effects).
public protocol StoreQueries: DecisionState {
    associatedtype Answering: DecisionState
    /// What answers them, as the domain's read-only view (opaque to callers, and no existential
    /// box: these run on every lookup).
    var decisionState: Answering { get }
}

extension StoreQueries {
    public func account(_ uid: UserID, in project: ProjectID) throws -> Account? {
        try decisionState.account(uid, in: project)
    }

    public func owner(ofEmail email: String, in project: ProjectID) throws -> UserID? {
        try decisionState.owner(ofEmail: email, in: project)
    }

    public func owner(ofProvider providerId: ProviderID, federatedId: String, in project: ProjectID) throws -> UserID? {
        try decisionState.owner(ofProvider: providerId, federatedId: federatedId, in: project)
    }

    public func owner(ofPhone phoneNumber: String, in project: ProjectID) throws -> UserID? {
        try decisionState.owner(ofPhone: phoneNumber, in: project)
    }

    public func config(of project: ProjectID) throws -> ProjectConfig {
        try decisionState.config(of: project)
    }

    public func oobCode(_ codeHash: String, in project: ProjectID) throws -> OOBCode? {
        try decisionState.oobCode(codeHash, in: project)
    }

    /// When the cleanup schedule will purge this anonymous account, if scheduled.
    public func cleanupSchedule(_ uid: UserID, in project: ProjectID) throws -> CleanupSchedule? {
        try decisionState.cleanupSchedule(uid, in: project)
    }
}
