/// Who caused an event, for the audit trail (the causation metadata every event's envelope
/// carries: actor, request id, client IP).
public struct Metadata: Equatable, Hashable, Sendable, Encodable {
    public enum Actor: String, Sendable, Encodable, CaseIterable {
        case endUser = "end_user"
        case admin
        case scheduler
        case cli
        case system
    }

    public var actor: Actor
    /// The end user's uid, the admin credential's name, the job's name.
    public var actorId: String?
    public var requestId: String?
    public var clientIp: String?

    public init(actor: Actor, actorId: String? = nil, requestId: String? = nil, clientIp: String? = nil) {
        self.actor = actor
        self.actorId = actorId
        self.requestId = requestId
        self.clientIp = clientIp
    }
}
