/// A sign-in provider a project configured: Identity Platform's `defaultSupportedIdpConfigs`
/// (`github.com`, `yahoo.com`, `google.com`, …) and `oauthIdpConfigs` (`oidc.*`).
public struct IdentityProviderConfig: Equatable, Sendable, Encodable {
    public var providerId: ProviderID
    public var enabled: Bool
    public var clientId: String
    public var clientSecret: ClientSecret?
    /// OpenID Connect: the issuer whose discovery document names the endpoints and keys.
    public var issuer: String?
    public var displayName: String?
    /// OpenID Connect: the authorization code flow (needs the secret), or an `id_token` only.
    public var responseType: ResponseType
    /// Other client ids whose `id_token`s this provider accepts, besides `clientId`: an app's
    /// iOS and Android clients, whose Google Sign-In tokens name them as their audience.
    public var additionalClientIds: [String]

    public struct ResponseType: Equatable, Sendable, Encodable {
        public var idToken: Bool
        public var code: Bool

        public init(idToken: Bool, code: Bool) {
            self.idToken = idToken
            self.code = code
        }
    }

    public init(
        providerId: ProviderID, enabled: Bool, clientId: String, clientSecret: ClientSecret? = nil, issuer: String? = nil,
        displayName: String? = nil, responseType: ResponseType = ResponseType(idToken: false, code: true),
        additionalClientIds: [String] = []
    ) {
        self.additionalClientIds = additionalClientIds
        self.providerId = providerId
        self.enabled = enabled
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.issuer = issuer
        self.displayName = displayName
        self.responseType = responseType
    }

    /// `oidc.*`: a generic OpenID Connect provider (`oauthIdpConfigs`); else one of
    /// Identity Platform's built-in providers (`defaultSupportedIdpConfigs`).
    public var isOpenIDConnect: Bool { providerId.rawValue.hasPrefix("oidc.") }

    /// Every audience an `id_token` for this provider may name.
    public var clientIds: [String] { [clientId] + additionalClientIds }

    /// Whether signing in needs the client secret: every code exchange does. Google and Apple
    /// also sign in with ID tokens apps bring (no secret); an OpenID Connect provider set to
    /// `id_token` only needs none.
    public var needsSecret: Bool {
        if isOpenIDConnect { return responseType.code }
        return providerId != .google && providerId != .apple
    }
}

/// Where a provider's client secret is. Never in plaintext in the ledger: sealed (AES-GCM with
/// the data directory's secrets key, by the auth layer), or a reference to a file the daemon
/// reads when it needs the secret (a systemd credential, `LoadCredential=`).
public enum ClientSecret: Equatable, Sendable, Encodable {
    /// `sealed`: nonce, ciphertext and tag; `fingerprint`: the first 8 bytes of the secret's
    /// SHA-256, in hex, so an operator can tell which secret is in force.
    case sealed(sealed: [UInt8], fingerprint: String)
    case file(path: String)

    private enum CodingKeys: String, CodingKey {
        case sealedFingerprint, file
    }

    /// Audit output names the fingerprint or the file, never the sealed bytes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .sealed(_, let fingerprint): try container.encode(fingerprint, forKey: .sealedFingerprint)
        case .file(let path): try container.encode(path, forKey: .file)
        }
    }
}

/// `project.identity_provider_deleted`.
public struct IdentityProviderDeleted: Equatable, Sendable, Encodable {
    public var providerId: ProviderID
    public init(providerId: ProviderID) { self.providerId = providerId }
}

extension ProjectConfig {
    public func identityProvider(_ providerId: ProviderID) -> IdentityProviderConfig? {
        identityProviders.first { $0.providerId == providerId }
    }
}
