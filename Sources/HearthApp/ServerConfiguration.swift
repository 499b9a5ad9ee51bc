import Foundation
import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthMail
import HearthOAuth
import HearthStore
import HearthWire

/// `hearth serve`'s settings: defaults (the development profile), then a JSON file, then
/// `HEARTH_*` environment variables, then command-line flags.
public struct ServerConfiguration: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 9099
    public var dataDirectory = DataDirectory.defaultPath
    public var profile = Profile.development
    public var project = "demo-hearth"
    /// Production: API key -> project id.
    public var apiKeys: [String: String] = [:]
    /// Bearer tokens accepted as admin, each for every project or the ones it names
    /// (production needs at least one for the admin API).
    public var adminTokens: [AdminCredential] = []
    /// Those read from `adminTokenFile`, for every project (kept apart, so that setting one
    /// source never drops the other's).
    public var adminTokenFileTokens: [AdminCredential] = []
    /// Lets the development profile (`Bearer owner`, unsigned custom tokens, the fake IdP,
    /// `/emulator/*`) listen on an address other machines reach. Off: development is loopback only.
    public var insecureDevelopmentOnNetwork = false
    /// Lets the production profile serve plain HTTP on an address other machines reach (a TLS
    /// proxy on another host, over a network that is yours). Off: production listens in
    /// cleartext on loopback only, behind a TLS proxy on the same machine.
    public var insecurePlainHttpOnNetwork = false
    public var signingAlgorithm = SigningKey.Algorithm.rs256
    /// PEM public keys that may sign custom tokens (the app backend's service account key).
    /// Production accepts custom tokens only when this is set.
    public var customTokenKeys: [String] = []
    public var scryptLogN = 14
    public var scryptBlockSize = 8
    public var scryptParallelization = 1
    /// Threads that hash passwords; at most this many hashes run at once.
    public var hashThreads = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// A connection that sends nothing for this long, between requests or in the middle of
    /// one, is closed: a stalled client cannot hold a connection and a body read for ever.
    public var idleTimeoutSeconds = 60
    /// A request must arrive whole (headers and body) within this many seconds of its first
    /// byte, plus a second for every `requestMinBytesPerSecond` received, and never take longer
    /// than `requestTimeoutMaxSeconds`: a client trickling a body cannot hold a connection.
    public var requestTimeoutSeconds = 10
    public var requestMinBytesPerSecond = 1024
    public var requestTimeoutMaxSeconds = 60
    /// Connections served at once; further clients wait in the listen backlog. `nil`: derived
    /// from the descriptor limit at start, less a reserve (ConnectionLimit).
    public var maxConnections: Int?
    /// Connections one client address (an IPv6 client's /64) may hold, and never more than an
    /// eighth of those still free; `trustedProxies` are not limited.
    public var maxConnectionsPerAddress = 256
    /// Bytes of requests received and not yet answered, over all connections: past it a request
    /// is answered 503 with `Retry-After` instead of being read (a request's bytes past its first
    /// 64 KiB may use three quarters of it).
    public var maxBufferedRequestBytes = 64 << 20
    /// A new connection that has not sent a whole request head this long after opening is closed.
    public var requestHeadTimeoutSeconds = 10
    /// Development: let browser pages use the emulator's admin credentials (`Bearer owner`) and
    /// reach Hearth from a public origin (private-network access). Off: any web page could
    /// otherwise read a developer's accounts, password hashes included.
    public var developmentBrowserAdmin = false
    /// The app's action handler that email links point at (production needs it for links).
    public var actionUrl: String?
    /// What emails call the app (Firebase's %APP_NAME%); the project id when unset.
    public var appName: String?
    /// Email delivery through an SMTP relay; without `smtpHost`, development keeps links in its
    /// outbox only and production sends none.
    public var mailFrom: String?
    public var mailFromName: String?
    public var smtpHost: String?
    /// 587 for STARTTLS, 465 for TLS, 25 without, unless set.
    public var smtpPort: Int?
    public var smtpSecurity = SMTPSettings.Security.startTLS
    public var smtpUsername: String?
    public var smtpPassword: String?
    /// A PEM bundle trusted besides the system's roots (a private relay's CA).
    public var smtpTrustRoots: String?
    /// Project id -> settings in Identity Platform's `Config` JSON (what `GET /v2/projects/{p}/config`
    /// shows), recorded at the first start that finds none for the project; after that the
    /// ledger's settings win (see `ProjectSeeding`).
    public var projects: [String: JSONValue] = [:]
    /// This server as browsers and identity providers reach it (`https://auth.example.com`):
    /// providers send users back to `<publicUrl>/__/auth/handler`. Production needs it for the
    /// headful sign-in flows; development uses the request's host without it.
    public var publicUrl: String?
    /// Identity providers' endpoints, for tests and self-hosted providers:
    /// `{"github.com": {"webUrl", "apiUrl"}, "yahoo.com": {"issuer"}}`.
    public var identityProviders: [String: JSONValue] = [:]
    /// How long Hearth waits for an identity provider's answer.
    public var providerTimeoutSeconds = 10
    /// Networks (CIDR ranges) beyond the public internet where identity providers may be reached,
    /// over http too (`ProviderNetworkConfiguration`); development adds loopback.
    public var providerAllowedNetworks: [String] = []
    /// Hosts an `oidc.*` issuer's discovery document may name besides the issuer's own.
    public var providerAllowedHosts: [String] = []
    /// Where admins may point a provider's `clientSecretFile` through the API; systemd's
    /// credentials directory when it sets one. The config file's own entries may point anywhere.
    public var secretFilesDirectory: String? = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]

    /// How long after signing in a session may change its email or password, delete its
    /// account or link a credential (Firebase's five minutes); 0 turns the rule off. Unset:
    /// 300 in production, off in development (as in the Auth Emulator).
    public var recentSignInSeconds: Int?
    /// How long action codes stay valid, in seconds: one number for every type, or an object by
    /// request type (`PASSWORD_RESET`, `EMAIL_SIGNIN`, `VERIFY_EMAIL`, `VERIFY_AND_CHANGE_EMAIL`,
    /// `RECOVER_EMAIL`). Unset: 6 hours each.
    public var actionCodeLifetimeSeconds: JSONValue?
    /// The abuse limits (`LimitsConfiguration`): unset, production's defaults or none.
    public var limits: JSONValue?
    /// Addresses (CIDR ranges) of the reverse proxies in front of Hearth: only a connection from
    /// one of them may name the client in `X-Forwarded-For`. Without any, the TCP peer is the client.
    public var trustedProxies: [String] = []

    public init() {}

    /// The recent-login rule in force: the setting, else the profile's default.
    public var recentSignIn: RecentSignIn? {
        let seconds = recentSignInSeconds ?? (profile == .production ? Int(RecentSignIn.firebase.window) : 0)
        return seconds > 0 ? RecentSignIn(window: Int64(seconds)) : nil
    }

    /// Keys of the JSON file and their environment variables.
    enum Key: String, CaseIterable {
        case host, port, dataDirectory, profile, project, apiKeys, adminTokens, adminTokenFile, signingAlgorithm
        case insecureDevelopmentOnNetwork, insecurePlainHttpOnNetwork
        case customTokenKeys
        case scryptLogN, scryptBlockSize, scryptParallelization, hashThreads, idleTimeoutSeconds
        case requestTimeoutSeconds, requestMinBytesPerSecond, requestTimeoutMaxSeconds, maxConnections
        case maxConnectionsPerAddress, maxBufferedRequestBytes, requestHeadTimeoutSeconds, developmentBrowserAdmin
        case actionUrl, appName, mailFrom, mailFromName
        case smtpHost, smtpPort, smtpSecurity, smtpUsername, smtpPassword, smtpPasswordFile, smtpTrustRoots
        case projects, publicUrl, identityProviders, providerTimeoutSeconds, secretFilesDirectory
        case recentSignInSeconds, limits, trustedProxies, actionCodeLifetimeSeconds
        case providerAllowedNetworks, providerAllowedHosts

        var environmentName: String {
            "HEARTH_"
                + rawValue.reduce(into: "") { name, character in
                    if character.isUppercase { name += "_" }
                    name += character.uppercased()
                }.replacingOccurrences(of: "DATA_DIRECTORY", with: "DATA_DIR")
        }
    }

    /// Defaults, then `file` (if given), then `environment`, then the command line's `flags`;
    /// validated as a whole.
    public static func load(
        file: String?, environment: [String: String], flags: (inout ServerConfiguration) -> Void = { _ in }
    ) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError.unreadable(file) }
            guard let object = JSONValue.parse([UInt8](data))?.objectValue else { throw ConfigurationError.notJSONObject(file) }
            if let unknown = object.keys.sorted().first(where: { Key(rawValue: $0) == nil }) {
                throw ConfigurationError.unknownKey(unknown, in: file)
            }
            // In a fixed order, not the dictionary's (which changes from run to run).
            for key in Key.allCases {
                if let value = object[key.rawValue] { try configuration.apply(key, value, source: file) }
            }
        }
        for key in Key.allCases {
            guard let text = environment[key.environmentName], !text.isEmpty else { continue }
            let value: JSONValue =
                switch key {
                case .apiKeys, .projects, .identityProviders, .limits, .actionCodeLifetimeSeconds:
                    JSONValue.parse(Array(text.utf8)) ?? .string(text)
                case .adminTokens, .customTokenKeys, .trustedProxies, .providerAllowedNetworks, .providerAllowedHosts:
                    .array(text.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
                default: .string(text)
                }
            try configuration.apply(key, value, source: key.environmentName)
        }
        flags(&configuration)
        try configuration.validate()
        return configuration
    }

    mutating func apply(_ key: Key, _ value: JSONValue, source: String) throws {
        func text() throws -> String {
            switch value {
            case .string(let text): return text
            case .int(let number): return String(number)
            default: throw ConfigurationError.invalid(key.rawValue, source: source)
            }
        }
        func number() throws -> Int {
            guard let number = Int(try text()) else { throw ConfigurationError.invalid(key.rawValue, source: source) }
            return number
        }
        func flag() throws -> Bool {
            switch value {
            case .bool(let flag): return flag
            case .string(let text) where ["true", "1", "yes"].contains(text.lowercased()): return true
            case .string(let text) where ["false", "0", "no"].contains(text.lowercased()): return false
            default: throw ConfigurationError.invalid(key.rawValue, source: source)
            }
        }
        switch key {
        case .host: host = try text()
        case .port: port = try number()
        case .dataDirectory: dataDirectory = try text()
        case .profile:
            guard let parsed = Profile(rawValue: try text()) else {
                throw ConfigurationError.invalid(key.rawValue, source: source)
            }
            profile = parsed
        case .project: project = try text()
        case .apiKeys:
            guard let object = value.objectValue else { throw ConfigurationError.invalid(key.rawValue, source: source) }
            apiKeys = try object.mapValues { project in
                guard let id = project.stringValue else { throw ConfigurationError.invalid(key.rawValue, source: source) }
                return id
            }
        case .adminTokens:
            guard let items = value.arrayValue else { throw ConfigurationError.invalid(key.rawValue, source: source) }
            adminTokens = try items.flatMap { item in try Self.adminCredentials(item, source: source) }
        case .adminTokenFile:
            // A systemd credential (LoadCredential=) or any file holding one token per line.
            adminTokenFileTokens = try Self.credentialLines(try text()).map { AdminCredential(token: $0) }
        case .insecureDevelopmentOnNetwork: insecureDevelopmentOnNetwork = try flag()
        case .insecurePlainHttpOnNetwork: insecurePlainHttpOnNetwork = try flag()
        case .developmentBrowserAdmin: developmentBrowserAdmin = try flag()
        case .signingAlgorithm:
            guard let parsed = SigningKey.Algorithm(rawValue: try text().uppercased()) else {
                throw ConfigurationError.invalid(key.rawValue, source: source)
            }
            signingAlgorithm = parsed
        case .customTokenKeys:
            guard let items = value.arrayValue else { throw ConfigurationError.invalid(key.rawValue, source: source) }
            customTokenKeys = items.compactMap(\.stringValue)
        case .scryptLogN: scryptLogN = try number()
        case .scryptBlockSize: scryptBlockSize = try number()
        case .scryptParallelization: scryptParallelization = try number()
        case .hashThreads: hashThreads = try number()
        case .idleTimeoutSeconds: idleTimeoutSeconds = try number()
        case .requestTimeoutSeconds: requestTimeoutSeconds = try number()
        case .requestMinBytesPerSecond: requestMinBytesPerSecond = try number()
        case .requestTimeoutMaxSeconds: requestTimeoutMaxSeconds = try number()
        case .maxConnections: maxConnections = try number()
        case .maxConnectionsPerAddress: maxConnectionsPerAddress = try number()
        case .maxBufferedRequestBytes: maxBufferedRequestBytes = try number()
        case .requestHeadTimeoutSeconds: requestHeadTimeoutSeconds = try number()
        case .actionUrl: actionUrl = try text()
        case .appName: appName = try text()
        case .mailFrom: mailFrom = try text()
        case .mailFromName: mailFromName = try text()
        case .smtpHost: smtpHost = try text()
        case .smtpPort: smtpPort = try number()
        case .smtpSecurity:
            guard let parsed = SMTPSettings.Security(rawValue: try text().lowercased()) else {
                throw ConfigurationError.invalid(key.rawValue, source: source)
            }
            smtpSecurity = parsed
        case .smtpUsername: smtpUsername = try text()
        case .smtpPassword: smtpPassword = try text()
        case .smtpPasswordFile:
            // A systemd credential (LoadCredential=): the password is the file's first line.
            smtpPassword = try Self.credentialLines(try text()).first ?? ""
        case .smtpTrustRoots: smtpTrustRoots = try text()
        case .projects:
            guard let object = value.objectValue else { throw ConfigurationError.invalid(key.rawValue, source: source) }
            projects = object
        case .publicUrl:
            let url = try text()
            publicUrl = url.hasSuffix("/") ? String(url.dropLast()) : url
        case .identityProviders:
            guard let object = value.objectValue else { throw ConfigurationError.invalid(key.rawValue, source: source) }
            identityProviders = object
        case .providerTimeoutSeconds: providerTimeoutSeconds = try number()
        case .secretFilesDirectory: secretFilesDirectory = try text()
        case .recentSignInSeconds: recentSignInSeconds = try number()
        case .limits: limits = value
        case .actionCodeLifetimeSeconds: actionCodeLifetimeSeconds = value
        case .trustedProxies:
            guard let items = value.arrayValue?.compactMap(\.stringValue) else {
                throw ConfigurationError.invalid(key.rawValue, source: source)
            }
            trustedProxies = items
        case .providerAllowedNetworks, .providerAllowedHosts:
            guard let items = value.arrayValue?.compactMap(\.stringValue) else {
                throw ConfigurationError.invalid(key.rawValue, source: source)
            }
            if key == .providerAllowedNetworks { providerAllowedNetworks = items } else { providerAllowedHosts = items }
        }
    }

    /// An `adminTokens` entry: a token for every project, or `{"token" | "tokenFile": …,
    /// "projects": [...], "name": …}` for the projects named (a file may hold several tokens, one
    /// a line), recorded in events by its name.
    static func adminCredentials(_ item: JSONValue, source: String) throws -> [AdminCredential] {
        if let token = item.stringValue { return [AdminCredential(token: token)] }
        guard let object = item.objectValue, Set(object.keys).isSubset(of: ["token", "tokenFile", "projects", "name"]) else {
            throw ConfigurationError.invalid("adminTokens", source: source)
        }
        let name = object["name"]?.stringValue
        if object["name"] != nil, !(name.map(AdminCredential.isValidName) ?? false) {
            throw ConfigurationError.invalid("adminTokens name (1 to 64 of letters, digits, . _ -)", source: source)
        }
        var scope = AdminCredential.Scope.everyProject
        if let listed = object["projects"] {
            guard let listed = listed.arrayValue else {
                throw ConfigurationError.invalid("adminTokens projects (a list of project ids)", source: source)
            }
            let projects = try listed.map { entry in
                guard let project = entry.stringValue.flatMap(ProjectID.init) else {
                    throw ConfigurationError.invalid("adminTokens projects", source: source)
                }
                return project
            }
            guard !projects.isEmpty else { throw ConfigurationError.invalid("adminTokens projects (empty)", source: source) }
            scope = .projects(Set(projects))
        }
        let tokens: [String]
        switch (object["token"]?.stringValue, object["tokenFile"]?.stringValue) {
        case (let token?, nil): tokens = [token]
        case (nil, let file?): tokens = try credentialLines(file)
        default: throw ConfigurationError.invalid("adminTokens (one of token, tokenFile)", source: source)
        }
        return tokens.map { AdminCredential(token: $0, scope: scope, name: name) }
    }

    /// A secret file's non-empty lines (systemd `LoadCredential=` or any file an operator keeps).
    static func credentialLines(_ path: String) throws -> [String] {
        guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigurationError.unreadable(path) }
        return contents.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    public func validate() throws {
        // 0: any free port (tests).
        guard (0...65535).contains(port) else { throw ConfigurationError.invalid("port", source: "\(port)") }
        guard ProjectID(project) != nil else { throw ConfigurationError.invalid("project", source: project) }
        for (key, project) in apiKeys where key.isEmpty || ProjectID(project) == nil {
            throw ConfigurationError.invalid("apiKeys", source: project)
        }
        // Within the limits every stored hash is verified against, or Hearth's own would never match.
        guard (10...StoredHashLimits.scryptLogN.upperBound).contains(scryptLogN),
            StoredHashLimits.scryptBlockSize.contains(scryptBlockSize),
            StoredHashLimits.scryptParallelization.contains(scryptParallelization)
        else { throw ConfigurationError.invalid("scrypt parameters", source: "logN \(scryptLogN)") }
        guard (1...256).contains(hashThreads) else { throw ConfigurationError.invalid("hashThreads", source: "\(hashThreads)") }
        guard (1...3600).contains(idleTimeoutSeconds) else {
            throw ConfigurationError.invalid("idleTimeoutSeconds", source: "\(idleTimeoutSeconds)")
        }
        guard (1...3600).contains(requestTimeoutSeconds) else {
            throw ConfigurationError.invalid("requestTimeoutSeconds", source: "\(requestTimeoutSeconds)")
        }
        guard (requestTimeoutSeconds...3600).contains(requestTimeoutMaxSeconds) else {
            throw ConfigurationError.invalid(
                "requestTimeoutMaxSeconds (at least requestTimeoutSeconds)", source: "\(requestTimeoutMaxSeconds)")
        }
        guard requestMinBytesPerSecond >= 1 else {
            throw ConfigurationError.invalid("requestMinBytesPerSecond", source: "\(requestMinBytesPerSecond)")
        }
        if let maxConnections, maxConnections < 1 {
            throw ConfigurationError.invalid("maxConnections", source: "\(maxConnections)")
        }
        guard maxConnectionsPerAddress >= 1 else {
            throw ConfigurationError.invalid("maxConnectionsPerAddress", source: "\(maxConnectionsPerAddress)")
        }
        // A whole request (1 MiB) must fit, with room for others beside it.
        guard maxBufferedRequestBytes >= 4 << 20 else {
            throw ConfigurationError.invalid("maxBufferedRequestBytes (at least 4 MiB)", source: "\(maxBufferedRequestBytes)")
        }
        guard (1...3600).contains(requestHeadTimeoutSeconds) else {
            throw ConfigurationError.invalid("requestHeadTimeoutSeconds", source: "\(requestHeadTimeoutSeconds)")
        }
        for credential in allAdminTokens {
            if let weakness = credential.weakness {
                throw ConfigurationError.weakAdminToken(weakness)
            }
        }
        if servesDevelopmentOffLoopback && !insecureDevelopmentOnNetwork {
            throw ConfigurationError.developmentOffLoopback(host)
        }
        if servesPlainHTTPOffLoopback && !insecurePlainHttpOnNetwork {
            throw ConfigurationError.plainHTTPOffLoopback(host)
        }
        if profile == .production && apiKeys.isEmpty {
            throw ConfigurationError.productionNeedsAPIKeys
        }
        _ = try declaredProjects()
        _ = try providerEndpoints()
        _ = try providerNetworkPolicy()
        if let publicUrl {
            guard let url = URL(string: publicUrl), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil,
                url.query == nil
            else { throw ConfigurationError.invalid("publicUrl", source: publicUrl) }
        }
        _ = try abuseLimitPolicy()
        _ = try actionCodeLifetimes()
        for range in trustedProxies where AddressRange(range) == nil {
            throw ConfigurationError.invalid("trustedProxies (addresses or CIDR ranges)", source: range)
        }
        if let recentSignInSeconds, !(0...86_400).contains(recentSignInSeconds) {
            throw ConfigurationError.invalid("recentSignInSeconds (0 to 86400)", source: "\(recentSignInSeconds)")
        }
        guard (1...120).contains(providerTimeoutSeconds) else {
            throw ConfigurationError.invalid("providerTimeoutSeconds", source: "\(providerTimeoutSeconds)")
        }
        if let actionUrl {
            guard let url = URL(string: actionUrl), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil
            else { throw ConfigurationError.invalid("actionUrl", source: actionUrl) }
        }
        if let smtpHost {
            guard !smtpHost.isEmpty else { throw ConfigurationError.invalid("smtpHost", source: "empty") }
            guard let mailFrom, (try? Validation.email(mailFrom)) != nil else {
                throw ConfigurationError.invalid("mailFrom (needed with smtpHost)", source: mailFrom ?? "unset")
            }
            if let smtpPort, !(1...65535).contains(smtpPort) {
                throw ConfigurationError.invalid("smtpPort", source: "\(smtpPort)")
            }
            if let smtpTrustRoots, !FileManager.default.isReadableFile(atPath: smtpTrustRoots) {
                throw ConfigurationError.unreadable(smtpTrustRoots)
            }
            // Production emails would carry links to nowhere: /emulator/action is off there.
            if profile == .production && actionUrl == nil {
                throw ConfigurationError.invalid("actionUrl (production mail needs it)", source: "unset")
            }
        }
    }

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

    /// The settings a project starts from before the config file's: the profile's defaults.
    public var projectDefaults: ProjectConfig { profile == .production ? .production : ProjectConfig() }

    public func declaredProjects() throws -> [DeclaredProject] {
        let declared = try projectsInFile()
        guard profile == .production else { return declared }
        let served = Set(apiKeys.values.compactMap(ProjectID.init) + [ProjectID(project)].compactMap { $0 })
        let implicit = served.subtracting(declared.map(\.project)).sorted { $0.rawValue < $1.rawValue }.map {
            DeclaredProject(project: $0, settings: projectDefaults, identityProviders: [], inFile: false)
        }
        return declared + implicit
    }

    private func projectsInFile() throws -> [DeclaredProject] {
        try projects.keys.sorted().map { id in
            guard let project = ProjectID(id), var object = projects[id]?.objectValue else {
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
                let settings = try ProjectConfigJSON.apply(.object(object), updateMask: nil, to: projectDefaults)
                return DeclaredProject(project: project, settings: settings, identityProviders: providers)
            } catch let error as FirebaseError {
                throw ConfigurationError.invalid("projects.\(id)", source: error.message)
            }
        }
    }

    /// Identity providers' endpoints: the defaults with the `identityProviders` overrides.
    public func providerEndpoints() throws -> ProviderEndpoints {
        do {
            return try ProviderEndpoints(overrides: identityProviders)
        } catch {
            throw ConfigurationError.invalid("identityProviders", source: "\(error)")
        }
    }

    /// The relay, when mail is configured.
    public var smtp: SMTPSettings? {
        guard let smtpHost else { return nil }
        let defaultPort =
            switch smtpSecurity {
            case .startTLS: 587
            case .tls: 465
            case .none: 25
            }
        return SMTPSettings(
            host: smtpHost, port: smtpPort ?? defaultPort, security: smtpSecurity, username: smtpUsername,
            password: smtpPassword, trustRootsFile: smtpTrustRoots, clientName: ProcessInfo.processInfo.hostName)
    }

    /// The custom-token verifier: emulator rules in development without keys.
    public func customTokenVerifier() throws -> CustomTokenVerifier {
        let keys = try customTokenKeys.map { path in
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigurationError.unreadable(path) }
            do {
                return try VerificationKey(pem: pem)
            } catch {
                throw ConfigurationError.invalid("customTokenKeys", source: path)
            }
        }
        return CustomTokenVerifier(keys: keys, acceptsUnsigned: profile == .development)
    }

    /// Development's conveniences on an address other machines may reach.
    var servesDevelopmentOffLoopback: Bool {
        profile == .development && !ListenAddress.isLoopback(host)
    }

    /// Production in cleartext where other machines reach it: passwords and tokens would cross
    /// the network unencrypted unless a TLS proxy is the only thing that does.
    var servesPlainHTTPOffLoopback: Bool {
        profile == .production && !ListenAddress.isLoopback(host)
    }

    /// The connection and buffered-bytes limits, under a connection cap `hearth serve` derived.
    public func connectionLimits(maxConnections: Int) -> ConnectionGovernor.Limits {
        ConnectionGovernor.Limits(
            maxConnections: maxConnections, perAddress: maxConnectionsPerAddress, bufferedBytes: maxBufferedRequestBytes,
            headTimeout: .seconds(requestHeadTimeoutSeconds), trustedProxies: trustedProxies.compactMap(AddressRange.init))
    }

    public var requestTimeLimit: RequestTimeLimit {
        RequestTimeLimit(
            base: .seconds(requestTimeoutSeconds), minBytesPerSecond: requestMinBytesPerSecond,
            maximum: .seconds(requestTimeoutMaxSeconds))
    }

    public var access: APIAccess {
        var keys: [String: ProjectID] = [:]
        for (key, project) in apiKeys { keys[key] = ProjectID(project) }
        return APIAccess(
            profile: profile, defaultProject: ProjectID(project)!, apiKeys: keys, adminTokens: allAdminTokens,
            trustedProxies: trustedProxies.compactMap(AddressRange.init), ownerFromBrowsers: developmentBrowserAdmin)
    }

    public var allAdminTokens: [AdminCredential] {
        adminTokens + adminTokenFileTokens
    }
}

public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case unreadable(String)
    case notJSONObject(String)
    case unknownKey(String, in: String)
    case invalid(String, source: String)
    case productionNeedsAPIKeys
    case weakAdminToken(String)
    case developmentOffLoopback(String)
    case plainHTTPOffLoopback(String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read \(path)"
        case .notJSONObject(let path): "\(path) is not a JSON object"
        case .unknownKey(let key, let path): "unknown setting '\(key)' in \(path)"
        case .invalid(let key, let source): "invalid \(key) (\(source))"
        case .productionNeedsAPIKeys: "the production profile needs apiKeys (API key -> project id)"
        case .weakAdminToken(let weakness):
            // The token itself is not repeated: this line goes to logs.
            "an admin token is \(weakness); use at least \(AdminCredential.minimumLength) random characters (openssl rand -base64 32)"
        case .developmentOffLoopback(let host):
            "the development profile serves Bearer owner, unsigned custom tokens and the fake IdP to anyone who can reach it, "
                + "so it listens on loopback only (\(host) is not): use 127.0.0.1 or ::1, the production profile, "
                + "or --insecure-development-on-network if this network is yours alone"
        case .plainHTTPOffLoopback(let host):
            "production serves sign-ins in plain HTTP, so it listens on loopback only (\(host) is not), behind a TLS "
                + "proxy on this machine (README, \"Hearth behind TLS\"); if the proxy is on another host and the network between "
                + "is yours alone, say so with insecurePlainHttpOnNetwork: true"
        }
    }
}

extension ServerConfiguration {
    /// `actionCodeLifetimeSeconds` in milliseconds by request type (types not named keep the default).
    public func actionCodeLifetimes() throws -> [OOBCodeIssued.RequestType: Int64] {
        func milliseconds(_ value: JSONValue, _ name: String) throws -> Int64 {
            guard case .int(let seconds) = value, (60...30 * 86_400).contains(seconds) else {
                throw ConfigurationError.invalid("\(name) (60 to 2592000 seconds)", source: value.text)
            }
            return seconds * 1000
        }
        switch actionCodeLifetimeSeconds {
        case nil: return [:]
        case .int?:
            let every = try milliseconds(actionCodeLifetimeSeconds!, "actionCodeLifetimeSeconds")
            return Dictionary(uniqueKeysWithValues: OOBCodeIssued.RequestType.allCases.map { ($0, every) })
        case .object(let byType)?:
            var lifetimes: [OOBCodeIssued.RequestType: Int64] = [:]
            for (name, value) in byType {
                guard let type = OOBCodeIssued.RequestType(rawValue: name) else {
                    throw ConfigurationError.invalid("actionCodeLifetimeSeconds: unknown request type", source: name)
                }
                lifetimes[type] = try milliseconds(value, "actionCodeLifetimeSeconds.\(name)")
            }
            return lifetimes
        default:
            throw ConfigurationError.invalid("actionCodeLifetimeSeconds", source: "a number or an object by request type")
        }
    }
}
