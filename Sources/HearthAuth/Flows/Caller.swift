import HearthDomain

/// Who is calling, as the HTTP layer resolved it: the project every read and write is scoped
/// to, and whether the caller is the project's administrator (`Bearer owner` / admin credential).
public struct Caller: Sendable {
    public var project: ProjectID
    public var isAdmin: Bool
    public var requestId: String?
    public var clientIp: String?
    /// Which admin credential acted, as events record it (`admin:<name>`): the token's configured
    /// name, else a prefix of its SHA-256; `owner` for the development credentials.
    public var adminName: String?
    /// The admin is the operator: its credential covers every project. Only the operator may have
    /// the daemon read files (a provider's `clientSecretFile`); a project's own admin may not,
    /// as those files hold the operator's and other projects' credentials.
    public var isOperator: Bool

    public init(
        project: ProjectID, isAdmin: Bool, requestId: String? = nil, clientIp: String? = nil, adminName: String? = nil,
        isOperator: Bool = false
    ) {
        self.project = project
        self.isAdmin = isAdmin
        self.requestId = requestId
        self.clientIp = clientIp
        self.adminName = isAdmin ? (adminName ?? "owner") : nil
        self.isOperator = isAdmin && isOperator
    }
}
