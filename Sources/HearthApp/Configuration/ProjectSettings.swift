import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// The projects served: the default one, the API keys that name them, the settings each starts
/// from, and the recent-login rule.
public struct ProjectSettings: Sendable, Equatable {
    public var project = "demo-hearth"
    /// Production: API key -> project id.
    public var apiKeys: [String: String] = [:]
    /// The `projects` setting: project id -> settings in Identity Platform's `Config` JSON (what
    /// `GET /v2/projects/{p}/config` shows), recorded at the first start that finds none for the
    /// project; after that the ledger's settings win (see `ProjectSeeding`).
    public var declared: [String: JSONValue] = [:]
    /// Unset: 300 in production, off in development (as in the Auth Emulator).
    public var recentSignInSeconds: Int?

    public init() {}

    /// What the `projects` section declares for one project: its settings over the defaults,
    /// and its identity providers (`defaultSupportedIdpConfigs`, `oauthIdpConfigs`: provider id
    /// -> the v2 API's JSON, the secret as `clientSecretFile`).
    /// In production, every project the API keys serve is declared too (with the production
    /// defaults, `inFile` false), so its first settings are the profile's, recorded.
    public struct DeclaredProject: Sendable {
        public var project: ProjectID
        public var settings: ProjectConfig
        public var identityProviders: [IdentityProviderConfig]
        public var inFile = true
    }

    public struct Valid: Sendable {
        public let defaultProject: ProjectID
        public let apiKeys: [String: ProjectID]
        public let declared: [DeclaredProject]
        /// The recent-login rule in force, or `nil` when it is off.
        public let recentSignIn: RecentSignIn?
    }

    func validated(_ profile: Profile) throws -> Valid {
        guard let defaultProject = ProjectID(project) else { throw ConfigurationError.invalid("project", source: project) }
        var keys: [String: ProjectID] = [:]
        for (key, project) in apiKeys {
            guard !key.isEmpty, let id = ProjectID(project) else { throw ConfigurationError.invalid("apiKeys", source: project) }
            keys[key] = id
        }
        if profile == .production && apiKeys.isEmpty {
            throw ConfigurationError.productionNeedsAPIKeys
        }
        if let recentSignInSeconds, !(0...86_400).contains(recentSignInSeconds) {
            throw ConfigurationError.invalid("recentSignInSeconds (0 to 86400)", source: "\(recentSignInSeconds)")
        }
        let window = recentSignInSeconds ?? (profile == .production ? Int(RecentSignIn.firebase.window) : 0)
        return Valid(
            defaultProject: defaultProject, apiKeys: keys,
            declared: try declaredProjects(profile, served: Set(keys.values).union([defaultProject])),
            recentSignIn: window > 0 ? RecentSignIn(window: Int64(window)) : nil)
    }

    private func declaredProjects(_ profile: Profile, served: Set<ProjectID>) throws -> [DeclaredProject] {
        let defaults = profile == .production ? ProjectConfig.production : ProjectConfig()
        let inFile = try declared.keys.sorted().map { id in try declaredProject(id, defaults: defaults) }
        guard profile == .production else { return inFile }
        let implicit = served.subtracting(inFile.map(\.project)).sorted { $0.rawValue < $1.rawValue }.map {
            DeclaredProject(project: $0, settings: defaults, identityProviders: [], inFile: false)
        }
        return inFile + implicit
    }

    private func declaredProject(_ id: String, defaults: ProjectConfig) throws -> DeclaredProject {
        guard let project = ProjectID(id), var object = declared[id]?.objectValue else {
            throw ConfigurationError.invalid("projects", source: "project \(id)")
        }
        do {
            var providers: [IdentityProviderConfig] = []
            for kind in [IdentityProviderJSON.Kind.defaultSupported, .openIDConnect] {
                guard let declared = object.removeValue(forKey: kind.collection) else { continue }
                guard let entries = declared.objectValue else {
                    throw ConfigurationError.invalid("projects.\(id).\(kind.collection)", source: "not an object")
                }
                for (providerId, body) in entries.sorted(by: { $0.key < $1.key }) {
                    let provider = try IdentityProviderJSON.providerId(providerId, kind)
                    providers.append(
                        try IdentityProviderJSON.apply(
                            body.objectValue ?? [:], updateMask: nil, to: nil, providerId: provider, kind: kind, secret: .filesOnly,
                            secretFiles: .anywhere))
                }
            }
            let settings = try ProjectConfigJSON.apply(.object(object), updateMask: nil, to: defaults)
            return DeclaredProject(project: project, settings: settings, identityProviders: providers)
        } catch let error as FirebaseError {
            throw ConfigurationError.invalid("projects.\(id)", source: error.message)
        }
    }
}
