/// A project's sign-in settings: the fold of its `project.config_changed` events. The defaults
/// are the Auth Emulator's: every method on, localhost authorized, cleanup off.
public struct ProjectConfig: Equatable, Sendable, Encodable {
    public var emailPasswordEnabled = true
    /// Email link needs email/password enabled too.
    public var emailLinkEnabled = true
    public var anonymousEnabled = true
    /// Federated providers that may sign in; `nil` allows any (development profile).
    public var enabledProviders: [ProviderID]?
    public var authorizedDomains: [String] = ["localhost"]
    /// Hosting domains for email links; the first is the default.
    public var linkDomains: [String] = []
    public var anonymousCleanup = false
    /// One account per email address (Firebase's default); off lets federated accounts share one.
    public var oneAccountPerEmail = true

    public init() {}

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

    public init(
        emailPasswordEnabled: Bool? = nil, emailLinkEnabled: Bool? = nil, anonymousEnabled: Bool? = nil,
        enabledProviders: [ProviderID]? = nil, authorizedDomains: [String]? = nil, linkDomains: [String]? = nil,
        anonymousCleanup: Bool? = nil, oneAccountPerEmail: Bool? = nil
    ) {
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
        return next
    }
}

/// Anonymous accounts are purged this long after creation, or after cleanup was enabled.
public let anonymousCleanupDelayMilliseconds: Int64 = 30 * 24 * 60 * 60 * 1000
