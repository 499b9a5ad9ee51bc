import HearthDomain

/// What Hearth asks of a real identity provider (HearthOAuth implements it over HTTP): where to
/// send the user, and who came back. The development profile's fake IdP needs none of it.
public protocol IdentityProviderGateway: Sendable {
    /// The provider's authorization URL, which `/__/auth/handler` redirects the browser to.
    func authorizationURL(_ request: AuthorizationRequest) async throws -> String
    /// Exchanges an authorization code (with the client secret and the PKCE verifier) for the
    /// user's identity, verified as the provider's protocol requires.
    func exchange(_ exchange: CodeExchange) async throws -> FederatedIdentity
    /// A credential an app brings itself (`signInWithCredential`): an `id_token` checked
    /// against the provider's keys and the configured client, or an access token the provider
    /// confirms was issued to the configured app. A token that can not be checked is refused.
    func verify(_ credential: DirectCredential) async throws -> FederatedIdentity
}

public struct DirectCredential: Sendable {
    public var provider: IdentityProviderConfig
    /// Needed to ask GitHub or Facebook whose app an access token belongs to.
    public var clientSecret: String?
    public var idToken: String?
    public var accessToken: String?
    /// The raw nonce the app sent along an `id_token` (the token holds its SHA-256).
    public var rawNonce: String?

    public init(provider: IdentityProviderConfig, clientSecret: String?, idToken: String?, accessToken: String?, rawNonce: String?) {
        self.provider = provider
        self.clientSecret = clientSecret
        self.idToken = idToken
        self.accessToken = accessToken
        self.rawNonce = rawNonce
    }
}

public struct AuthorizationRequest: Sendable {
    public var provider: IdentityProviderConfig
    public var redirectURI: String
    public var state: String
    /// OpenID Connect's `nonce`, echoed in the `id_token`.
    public var nonce: String
    /// PKCE (RFC 7636): base64url SHA-256 of the verifier, method S256.
    public var codeChallenge: String
    /// Requested beyond the provider's defaults.
    public var scopes: [String]
    /// The app's `customParameters`, reserved names already removed.
    public var customParameters: [String: String]
    public var language: String?
}

public struct CodeExchange: Sendable {
    public var provider: IdentityProviderConfig
    public var clientSecret: String
    public var code: String
    public var redirectURI: String
    public var codeVerifier: String
    public var nonce: String

    public init(
        provider: IdentityProviderConfig, clientSecret: String, code: String, redirectURI: String, codeVerifier: String, nonce: String
    ) {
        self.provider = provider
        self.clientSecret = clientSecret
        self.code = code
        self.redirectURI = redirectURI
        self.codeVerifier = codeVerifier
        self.nonce = nonce
    }
}

/// Why a provider could not be used. The client sees one `INVALID_IDP_RESPONSE` whatever the
/// reason (it would otherwise learn what answers at a URL an admin set: an open port from a
/// closed one); the reason goes to the log. Only `unsupported`, decided before any call from
/// the request and the configuration alone, reaches the client as it is.
public enum IdentityProviderFailure: Error, Equatable, CustomStringConvertible {
    /// Down, unreachable or too slow: the call timed out.
    case unavailable(String)
    /// The provider answered, but refused (a used or wrong code, a revoked app).
    case refused(String)
    /// An answer that does not prove an identity (bad signature, wrong audience, no subject).
    case invalid(String)
    /// A credential or flow this provider does not take (a bare access token where an
    /// `id_token` is needed), known without asking anyone.
    case unsupported(String)

    public var description: String {
        switch self {
        case .unavailable(let reason), .refused(let reason), .invalid(let reason), .unsupported(let reason): reason
        }
    }
}
