import Crypto
import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Who may call, and for which project, in each of the two profiles.
///
/// Development: any non-empty API key means the default project; `Bearer owner` is its admin.
/// Production: API keys are registered per project and admin needs a configured credential.
public struct APIAccess: Sendable {
    public var profile: Profile
    public var defaultProject: ProjectID
    /// Whether `/console` is served (`disableConsole` turns it off).
    public var console = true
    /// Production: API key -> project.
    public var apiKeys: [String: ProjectID]
    /// Reverse proxies allowed to name the client in `X-Forwarded-For` (`ClientAddress`).
    public var trustedProxies: [AddressRange]
    /// Development: whether browser pages may use the emulator's admin credentials and reach
    /// Hearth from a public origin (`developmentBrowserAdmin`). Off, a page a developer visits
    /// can not read their local accounts.
    public var ownerFromBrowsers: Bool
    /// How much of a client's address the request log keeps (`ClientAddressLogging`).
    public var logClientAddresses = ClientAddressLogging.network
    /// Bearer tokens that grant admin access, by their SHA-256 (a lookup by digest tells a
    /// timing observer nothing about the tokens), with the projects each may act on and the name
    /// events record it by.
    private var admins: [SHA256Digest: AdminIdentity]
    /// In a cluster, the SHA-256 of the credential with which a follower names the client of a
    /// request it forwards (`LeaderForwarding`); `nil` believes no such name.
    var forwardingTokenDigest: SHA256Digest?

    /// Believes the client a follower names when it forwards a request with `token`.
    public mutating func trustForwarding(by token: String) {
        forwardingTokenDigest = SHA256.hash(data: Array(token.utf8))
    }

    public init(
        profile: Profile, defaultProject: ProjectID, apiKeys: [String: ProjectID] = [:], adminTokens: [AdminCredential] = [],
        trustedProxies: [AddressRange] = [], ownerFromBrowsers: Bool = false
    ) {
        self.profile = profile
        self.defaultProject = defaultProject
        self.apiKeys = apiKeys
        self.trustedProxies = trustedProxies
        self.ownerFromBrowsers = ownerFromBrowsers
        admins = [:]
        for credential in adminTokens {
            let digest = SHA256.hash(data: Array(credential.token.utf8))
            admins[digest, default: AdminIdentity(name: credential.recordedName, scope: .projects([]))].widen(by: credential)
        }
    }

    public static func development(project: ProjectID) -> APIAccess {
        APIAccess(profile: .development, defaultProject: project)
    }

    static let apiKeyHeader = HTTPField.Name("x-goog-api-key")!

    public struct Resolved: Sendable {
        public var caller: Caller
        public var apiKey: String?
    }

    /// Resolves the caller of `request`; `pathProject` is the `{p}` of `/v1/projects/{p}/...`.
    func resolve(_ request: Request, _ context: some RemoteAddressRequestContext, query: QueryString, pathProject: Substring?) throws
        -> Resolved
    {
        let apiKey = query["key"] ?? request.headers[Self.apiKeyHeader]
        let admin = try self.admin(request)
        var project: ProjectID
        if let pathProject {
            guard let parsed = ProjectID(String(pathProject)) else { throw FirebaseError.bad("INVALID_PROJECT_ID") }
            guard admin != nil else {
                throw FirebaseError.bad("INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
            }
            project = parsed
        } else if let admin {
            project = admin.scope.onlyProject ?? defaultProject
        } else {
            guard let apiKey, !apiKey.isEmpty else { throw FirebaseError.missingAPIKey }
            project = try self.project(forKey: apiKey)
        }
        if profile == .production, admin != nil, pathProject == nil, let apiKey, let keyed = apiKeys[apiKey] { project = keyed }
        if let admin, !admin.scope.covers(project) { throw FirebaseError.permissionDenied }
        return Resolved(caller: caller(request, context, project: project, admin: admin), apiKey: apiKey)
    }

    /// The caller an API key speaks for (the handler page's `apiKey` parameter).
    func caller(apiKey: String, _ request: Request, _ context: some RemoteAddressRequestContext) throws -> Caller {
        caller(request, context, project: try project(forKey: apiKey), admin: nil)
    }

    /// The caller as the transport tells it: request id and client address.
    func caller(_ request: Request, _ context: some RemoteAddressRequestContext, project: ProjectID, admin: AdminIdentity?) -> Caller {
        Caller(
            project: project, isAdmin: admin != nil, requestId: context.id, clientIp: clientAddress(request, peer: context.clientIp),
            adminName: admin?.name, isOperator: admin?.scope == .everyProject)
    }

    /// The API key action links carry when the request had none (Admin SDK calls): one the
    /// project registered, or the emulator's placeholder in development.
    func linkKey(for project: ProjectID) -> String {
        apiKeys.filter { $0.value == project }.keys.min() ?? "fake-api-key"
    }

    private func project(forKey apiKey: String) throws -> ProjectID {
        switch profile {
        case .development: return defaultProject
        case .production:
            guard let project = apiKeys[apiKey] else {
                throw FirebaseError(
                    message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT", reason: "badRequest")
            }
            return project
        }
    }

    /// Whether the request carries an admin credential (for any project); an unknown bearer is a 401.
    func isAdmin(_ request: Request) throws -> Bool {
        try admin(request) != nil
    }

    /// Whether the request carries the operator's credential (one for every project); an
    /// unknown bearer is a 401.
    func isOperator(_ request: Request) throws -> Bool {
        try admin(request)?.scope == .everyProject
    }

    /// Who `Authorization: Bearer <token>` is and what it may administer: `nil` for no bearer
    /// (other schemes are ignored); an unknown bearer is a 401.
    func admin(_ request: Request) throws -> AdminIdentity? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        if let admin = admins[SHA256.hash(data: Array(token.utf8))] { return admin }
        // The Auth Emulator's owner credentials: `owner` in any case, and any Google OAuth access
        // token (`ya29.…`, what the Admin SDKs send with real credentials), unchecked as the
        // emulator does. Development only, which listens on loopback unless its operator chose
        // otherwise (ServerConfiguration.validate).
        guard profile == .development, Self.isEmulatorOwnerToken(token) else { throw FirebaseError.invalidCredentials }
        // Anyone can write `owner`: from a web page (an `Origin`), it would let any site the
        // developer visits read their accounts, hashes included. The SDKs that use it send none.
        if request.headers[.origin] != nil, !ownerFromBrowsers { throw FirebaseError.ownerFromBrowser }
        return AdminIdentity(name: "owner", scope: .everyProject)
    }

    /// The configured admin credential whose token has this SHA-256 digest (the console's
    /// sessions name theirs so): never the emulator's owner credentials.
    func admin(tokenDigest: [UInt8]) -> AdminIdentity? {
        admins.first { Array($0.key) == tokenDigest }?.value
    }

    /// The SHA-256 of a token, as `admin(tokenDigest:)` finds it.
    static func digest(ofToken token: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// `owner` (any case) or a Google OAuth access token: the emulator's admin credentials.
    static func isEmulatorOwnerToken(_ token: some StringProtocol) -> Bool {
        token.lowercased() == "owner" || token.hasPrefix("ya29.")
    }
}

extension FirebaseError {
    static let ownerFromBrowser = FirebaseError(
        httpStatus: 403,
        message:
            "PERMISSION_DENIED : ((The emulator's admin credentials and routes are not for web pages; set developmentBrowserAdmin to allow them.))",
        status: "PERMISSION_DENIED", reason: "forbidden")
}

/// An admin credential as a request presented it: the name its events record and its scope.
struct AdminIdentity: Sendable, Equatable {
    var name: String
    var scope: AdminCredential.Scope

    /// The same token listed twice grants what either entry grants, under the first entry's name.
    mutating func widen(by credential: AdminCredential) {
        scope.widen(by: credential.scope)
    }
}
