import HearthAuth
import HearthDomain
import HearthWire

/// Where the built-in providers live, overridable per provider in the config file's
/// `identityProviders` (tests, GitHub Enterprise Server, a self-hosted OpenID Connect issuer):
/// GitHub by `webUrl` and `apiUrl`, Facebook by `graphUrl`, OpenID Connect providers (Yahoo,
/// Google) by `issuer`.
public struct ProviderEndpoints: Sendable, Equatable {
    public var gitHubWeb = "https://github.com"
    public var gitHubAPI = "https://api.github.com"
    public var facebookGraph = "https://graph.facebook.com"
    /// Issuers of the built-in OpenID Connect providers (Apple's id_tokens come from apps' native
    /// Sign in with Apple); `oidc.*` providers name their own.
    public var issuers: [ProviderID: String] = [
        .yahoo: "https://api.login.yahoo.com", .google: "https://accounts.google.com", .apple: "https://appleid.apple.com",
    ]

    public init() {}

    public enum Invalid: Error, CustomStringConvertible {
        case setting(String)

        public var description: String {
            switch self {
            case .setting(let path):
                "invalid identityProviders setting \(path) (an absolute http or https URL without user info; an issuer without a query or fragment)"
            }
        }
    }

    /// The defaults with `overrides` (`{"github.com": {"webUrl", "apiUrl"}, "yahoo.com": {"issuer"}}`).
    public init(overrides: [String: JSONValue]) throws {
        for (provider, settings) in overrides {
            guard let settings = settings.objectValue else { throw Invalid.setting(provider) }
            for (name, value) in settings {
                guard let url = value.stringValue, (try? name == "issuer" ? ProviderURL.issuer(url) : ProviderURL(url)) != nil else {
                    throw Invalid.setting("\(provider).\(name)")
                }
                let trimmed = url.hasSuffix("/") ? String(url.dropLast()) : url
                switch (ProviderID(provider), name) {
                case (.github, "webUrl"): gitHubWeb = trimmed
                case (.github, "apiUrl"): gitHubAPI = trimmed
                case (.facebook, "graphUrl"): facebookGraph = trimmed
                case (let id, "issuer") where id != .github && id != .facebook: issuers[id] = trimmed
                default: throw Invalid.setting("\(provider).\(name)")
                }
            }
        }
    }
}
