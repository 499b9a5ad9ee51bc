import HearthDomain
import LMDB

/// What `decide` and a write job read inside the writer's transaction: accounts as the job's
/// `ProjectionWriter` holds them (folded, not yet flushed), every index as written through.
public struct WriteState: DecisionState {
    public let writer: ProjectionWriter

    public init(_ writer: ProjectionWriter) { self.writer = writer }

    private var stored: ProjectionReader<WriteTransaction> { writer.projections.reader(writer.txn) }

    public func account(_ uid: UserID, in project: ProjectID) throws -> Account? {
        try writer.account(uid, in: project)
    }

    public func owner(ofEmail email: String, in project: ProjectID) throws -> UserID? {
        try stored.owner(ofEmail: email, in: project)
    }

    public func owner(ofProvider providerId: ProviderID, federatedId: String, in project: ProjectID) throws -> UserID? {
        try stored.owner(ofProvider: providerId, federatedId: federatedId, in: project)
    }

    public func owner(ofPhone phoneNumber: String, in project: ProjectID) throws -> UserID? {
        try stored.owner(ofPhone: phoneNumber, in: project)
    }

    public func config(of project: ProjectID) throws -> ProjectConfig {
        try stored.config(of: project)
    }

    public func oobCode(_ codeHash: String, in project: ProjectID) throws -> OOBCode? {
        try stored.oobCode(codeHash, in: project)
    }

    public func cleanupSchedule(_ uid: UserID, in project: ProjectID) throws -> CleanupSchedule? {
        try stored.cleanupSchedule(uid, in: project)
    }
}
