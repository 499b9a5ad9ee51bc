import Crypto
import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import Hummingbird

/// Who may call, and for which project, in each of the two profiles.
///
/// Development: any non-empty API key means the default project; `Bearer owner` is its admin.
/// Production: API keys are registered per project and admin needs a configured credential.
public struct APIAccess: Sendable {
    public enum Profile: String, Sendable, CaseIterable {
        case development, production
    }

    public var profile: Profile
    public var defaultProject: ProjectID
    /// Production: API key -> project.
    public var apiKeys: [String: ProjectID]
    /// Reverse proxies allowed to name the client in `X-Forwarded-For` (`ClientAddress`).
    public var trustedProxies: [AddressRange]
    /// Development: whether browser pages may use the emulator's admin credentials and reach
    /// Hearth from a public origin (`developmentBrowserAdmin`). Off, a page a developer visits
    /// can not read their local accounts.
    public var ownerFromBrowsers: Bool
    /// Bearer tokens that grant admin access, by their SHA-256 (a lookup by digest tells a
    /// timing observer nothing about the tokens), with the projects each may act on and the name
    /// events record it by.
    private var admins: [SHA256Digest: AdminIdentity]

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

/// A bearer token that grants admin access, to every project or to the ones it names (one
/// deployment serving several projects gives each operator a token of its own).
public struct AdminCredential: Sendable, Equatable {
    public enum Scope: Sendable, Equatable {
        case everyProject
        case projects(Set<ProjectID>)

        func covers(_ project: ProjectID) -> Bool {
            switch self {
            case .everyProject: true
            case .projects(let projects): projects.contains(project)
            }
        }

        /// The project a call that names none acts on, when the token allows just one.
        var onlyProject: ProjectID? {
            guard case .projects(let projects) = self, projects.count == 1 else { return nil }
            return projects.first
        }

        /// The same token listed twice grants what either entry grants.
        mutating func widen(by other: Scope) {
            switch (self, other) {
            case (.projects(let mine), .projects(let theirs)): self = .projects(mine.union(theirs))
            default: self = .everyProject
            }
        }
    }

    public var token: String
    public var scope: Scope
    /// What events record as the actor (`admin:<name>`), so `hearth project history` tells which
    /// tenant changed what; unset, `token-` and the first 8 hex digits of the token's SHA-256.
    public var name: String?

    public init(token: String, scope: Scope = .everyProject, name: String? = nil) {
        self.token = token
        self.scope = scope
        self.name = name
    }

    /// The name events record: the configured one, else one derived from the token that tells
    /// tokens apart without revealing anything an attacker could use (32 bits of a hash of a
    /// random token of at least 32 characters).
    public var recordedName: String {
        if let name { return name }
        let digest = SHA256.hash(data: Array(token.utf8))
        return "token-" + digest.prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// A name an operator may give a token: 1 to 64 of letters, digits and `._-`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2E || byte == 0x5F
                    || byte == 0x2D
            }
    }

    /// The shortest token accepted: 32 characters, e.g. `openssl rand -base64 32` gives 44.
    public static let minimumLength = 32
    /// Fewer distinct characters than this is no random token ("aaaa…", "0123012301230123…").
    public static let minimumDistinctCharacters = 8
    /// Tokens that are published, so never secret: the emulator's, the README's examples and the
    /// usual placeholders (compared case-insensitively).
    public static let knownDefaults: Set<String> = [
        "owner", "admin", "root", "secret", "password", "changeme", "token", "test", "default", "hearth", "firebase",
        "replace-with-a-long-random-token-from-openssl-rand",
    ]

    /// Why this token is refused, or `nil` when it may guard the admin API.
    public var weakness: String? {
        if Self.knownDefaults.contains(token.lowercased()) { return "a published default" }
        if token.count < Self.minimumLength { return "shorter than \(Self.minimumLength) characters" }
        if token.contains(where: \.isWhitespace) { return "contains white space" }
        if Set(token).count < Self.minimumDistinctCharacters {
            return "fewer than \(Self.minimumDistinctCharacters) distinct characters"
        }
        return nil
    }
}
