/// A project's sign-in settings: the fold of its `project.config_changed` events. The defaults
/// are the Auth Emulator's: every method on, localhost authorized, cleanup off.
public struct ProjectConfig: Equatable, Sendable, Encodable {
    public var emailPasswordEnabled = true
    /// Email link needs email/password enabled too (`allowsEmailLinkSignIn`).
    public var emailLinkEnabled = true
    public var anonymousEnabled = true
    /// Federated providers that may sign in; `nil` allows any (development profile).
    public var enabledProviders: [ProviderID]?
    public var authorizedDomains: [String] = ["localhost"]
    /// Hosting domains for email links; the first is the default.
    public var linkDomains: [String] = []
    public var anonymousCleanup = false
    /// How long after creation (or after cleanup was turned on) an anonymous account is purged:
    /// Firebase's 30 days. Shorter only for tests and staging (`anonymousCleanupAfterSeconds`).
    public var anonymousCleanupPeriodSeconds = ProjectConfig.anonymousCleanupPeriodRange.upperBound
    /// Whether email links sign in (and may be sent): the Email/Password provider on, and
    /// email links with it (`passwordRequired` false).
    public var allowsEmailLinkSignIn: Bool { emailPasswordEnabled && emailLinkEnabled }
    /// One account per email address (Firebase's default); off lets federated accounts share one.
    public var oneAccountPerEmail = true
    /// Email enumeration protection (`emailPrivacyConfig.enableImprovedEmailPrivacy`).
    public var improvedEmailPrivacy = false
    /// The project's apps, as Firebase registers them: headful sign-ins return only to these
    /// (iOS bundle ids, Android package names). Development accepts any app.
    public var iosBundleIds: [String] = []
    public var androidPackages: [String] = []
    /// The apps that open the project's email links themselves, with what their link domains'
    /// association files need (Team IDs, signing certificates).
    public var iosApps: [IOSApp] = []
    public var androidApps: [AndroidApp] = []
    /// Configured sign-in providers, sorted by provider id.
    public var identityProviders: [IdentityProviderConfig] = []
    /// Multi-factor authentication (the v2 config's `mfa`): off, as in a new Firebase project.
    public var multiFactor = MultiFactorConfig()
    /// The password policy (`passwordPolicyConfig`): not enforced, as in a new project.
    public var passwordPolicy = PasswordPolicy()

    public init() {}

    /// The production profile's defaults, where they differ from the emulator's: email
    /// enumeration protection on, as Firebase has it for every project created since September 2023.
    public static let production: ProjectConfig = {
        var config = ProjectConfig()
        config.improvedEmailPrivacy = true
        return config
    }()

    /// From a second (tests) to Firebase's 30 days.
    public static let anonymousCleanupPeriodRange: ClosedRange<Int64> = 1...(30 * 24 * 60 * 60)

    /// The cleanup period in milliseconds, as schedules count it.
    public var anonymousCleanupDelay: Int64 { anonymousCleanupPeriodSeconds * 1000 }

    /// Whether `host` is one of the authorized domains (exactly, case aside): where continue
    /// URLs may point and, in production, which web origins may call the API.
    public func authorizes(host: String) -> Bool {
        authorizedDomains.contains(host.lowercased())
    }

    /// Whether `host` is one of the link domains (exactly, case aside).
    public func servesLinks(on host: String) -> Bool {
        linkDomains.contains(host.lowercased())
    }

    public func allowsProvider(_ providerId: ProviderID) -> Bool {
        enabledProviders.map { $0.contains(providerId) } ?? true
    }
}

/// A change to project settings; `nil` fields stay as they were.
public struct ProjectConfigChange: Equatable, Sendable, Encodable {
    public var emailPasswordEnabled: Bool?
    public var emailLinkEnabled: Bool?
    public var anonymousEnabled: Bool?
    public var enabledProviders: [ProviderID]?
    public var authorizedDomains: [String]?
    public var linkDomains: [String]?
    public var anonymousCleanup: Bool?
    public var oneAccountPerEmail: Bool?
    public var anonymousCleanupPeriodSeconds: Int64?
    public var improvedEmailPrivacy: Bool?
    public var iosBundleIds: [String]?
    public var androidPackages: [String]?
    public var iosApps: [IOSApp]?
    public var androidApps: [AndroidApp]?
    public var multiFactor: MultiFactorConfig?
    public var passwordPolicy: PasswordPolicy?

    public init(
        emailPasswordEnabled: Bool? = nil, emailLinkEnabled: Bool? = nil, anonymousEnabled: Bool? = nil,
        enabledProviders: [ProviderID]? = nil, authorizedDomains: [String]? = nil, linkDomains: [String]? = nil,
        anonymousCleanup: Bool? = nil, oneAccountPerEmail: Bool? = nil, anonymousCleanupPeriodSeconds: Int64? = nil,
        improvedEmailPrivacy: Bool? = nil, iosBundleIds: [String]? = nil, androidPackages: [String]? = nil,
        iosApps: [IOSApp]? = nil, androidApps: [AndroidApp]? = nil, multiFactor: MultiFactorConfig? = nil,
        passwordPolicy: PasswordPolicy? = nil
    ) {
        self.multiFactor = multiFactor
        self.passwordPolicy = passwordPolicy
        self.iosApps = iosApps
        self.androidApps = androidApps
        self.iosBundleIds = iosBundleIds
        self.androidPackages = androidPackages
        self.anonymousCleanupPeriodSeconds = anonymousCleanupPeriodSeconds
        self.improvedEmailPrivacy = improvedEmailPrivacy
        self.emailPasswordEnabled = emailPasswordEnabled
        self.emailLinkEnabled = emailLinkEnabled
        self.anonymousEnabled = anonymousEnabled
        self.enabledProviders = enabledProviders
        self.authorizedDomains = authorizedDomains
        self.linkDomains = linkDomains
        self.anonymousCleanup = anonymousCleanup
        self.oneAccountPerEmail = oneAccountPerEmail
    }

    public var isEmpty: Bool { self == ProjectConfigChange() }
}

extension ProjectConfig {
    public func applying(_ change: ProjectConfigChange) -> ProjectConfig {
        var next = self
        if let value = change.emailPasswordEnabled { next.emailPasswordEnabled = value }
        if let value = change.emailLinkEnabled { next.emailLinkEnabled = value }
        if let value = change.anonymousEnabled { next.anonymousEnabled = value }
        if let value = change.enabledProviders { next.enabledProviders = value }
        if let value = change.authorizedDomains { next.authorizedDomains = value }
        if let value = change.linkDomains { next.linkDomains = value }
        if let value = change.anonymousCleanup { next.anonymousCleanup = value }
        if let value = change.oneAccountPerEmail { next.oneAccountPerEmail = value }
        if let value = change.anonymousCleanupPeriodSeconds { next.anonymousCleanupPeriodSeconds = value }
        if let value = change.improvedEmailPrivacy { next.improvedEmailPrivacy = value }
        if let value = change.iosBundleIds { next.iosBundleIds = value }
        if let value = change.androidPackages { next.androidPackages = value }
        if let value = change.iosApps { next.iosApps = value }
        if let value = change.androidApps { next.androidApps = value }
        if let value = change.multiFactor { next.multiFactor = value }
        if let value = change.passwordPolicy { next.passwordPolicy = value }
        return next
    }

    /// The change that turns this config into `target` (nil fields where they agree).
    public func change(to target: ProjectConfig) -> ProjectConfigChange {
        func differing<T: Equatable>(_ path: KeyPath<ProjectConfig, T>) -> T? {
            self[keyPath: path] == target[keyPath: path] ? nil : target[keyPath: path]
        }
        return ProjectConfigChange(
            emailPasswordEnabled: differing(\.emailPasswordEnabled), emailLinkEnabled: differing(\.emailLinkEnabled),
            anonymousEnabled: differing(\.anonymousEnabled),
            enabledProviders: enabledProviders == target.enabledProviders ? nil : target.enabledProviders,
            authorizedDomains: differing(\.authorizedDomains), linkDomains: differing(\.linkDomains),
            anonymousCleanup: differing(\.anonymousCleanup), oneAccountPerEmail: differing(\.oneAccountPerEmail),
            anonymousCleanupPeriodSeconds: differing(\.anonymousCleanupPeriodSeconds),
            improvedEmailPrivacy: differing(\.improvedEmailPrivacy), iosBundleIds: differing(\.iosBundleIds),
            androidPackages: differing(\.androidPackages), iosApps: differing(\.iosApps),
            androidApps: differing(\.androidApps), multiFactor: differing(\.multiFactor),
            passwordPolicy: differing(\.passwordPolicy))
    }
}

/// When anonymous cleanup purges an account, and by which rule (Firebase's: 30 days after the
/// account's creation, or after cleanup was turned on for an account that existed then).
public struct CleanupSchedule: Equatable, Hashable, Sendable, Encodable {
    public enum Rule: String, Sendable, Encodable, CaseIterable {
        /// Created while cleanup was on: due a period after its creation.
        case createdWhileCleanupOn = "created_while_cleanup_on"
        /// Existed (anonymous, unscheduled) when cleanup was turned on: due a period after that.
        case existedWhenCleanupTurnedOn = "existed_when_cleanup_turned_on"
    }

    public var dueAt: Int64
    public var rule: Rule
    /// The instant the period counted from: the account's creation, or cleanup turned on.
    public var since: Int64

    public init(dueAt: Int64, rule: Rule, since: Int64) {
        self.dueAt = dueAt
        self.rule = rule
        self.since = since
    }
}
