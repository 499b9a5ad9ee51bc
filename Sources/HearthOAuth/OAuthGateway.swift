import HearthAuth
import HearthDomain
import HearthWire
import NIOCore

/// Hearth's identity providers over HTTP: GitHub's OAuth apps, and OpenID Connect for Yahoo,
/// Google and every `oidc.*` provider.
public final class OAuthGateway: IdentityProviderGateway {
    let endpoints: ProviderEndpoints
    let gitHub: GitHub
    let facebook: Facebook
    let openID: OpenIDConnect

    public init(
        endpoints: ProviderEndpoints, network: ProviderNetworkPolicy, timeoutSeconds: Int64 = 10,
        clock: @escaping @Sendable () -> Int64
    ) {
        let http = ProviderHTTP(timeout: .seconds(timeoutSeconds), policy: network)
        self.endpoints = endpoints
        gitHub = GitHub(http: http, web: endpoints.gitHubWeb, api: endpoints.gitHubAPI)
        facebook = Facebook(http: http, graph: endpoints.facebookGraph)
        openID = OpenIDConnect(http: http, clock: clock)
    }

    public func authorizationURL(_ request: AuthorizationRequest) async throws -> String {
        if request.provider.providerId == .github { return gitHub.authorizationURL(request) }
        return try await openID.authorizationURL(
            request, issuer: try issuer(of: request.provider), confined: request.provider.isOpenIDConnect)
    }

    public func exchange(_ exchange: CodeExchange) async throws -> FederatedIdentity {
        if exchange.provider.providerId == .github { return try await gitHub.exchange(exchange) }
        return try await openID.exchange(
            exchange, issuer: try issuer(of: exchange.provider), confined: exchange.provider.isOpenIDConnect)
    }

    public func verify(_ credential: DirectCredential) async throws -> FederatedIdentity {
        let provider = credential.provider
        if let idToken = credential.idToken, provider.providerId != .github, provider.providerId != .facebook {
            let issuer = try issuer(of: provider)
            // The app's raw nonce; the token carries its SHA-256 (Google, Apple), or itself.
            let claims = try await openID.verify(
                idToken, issuer: issuer, confined: provider.isOpenIDConnect, audiences: provider.clientIds, nonce: nil)
            if let raw = credential.rawNonce {
                let nonce = claims["nonce"]?.stringValue
                guard nonce == raw || nonce == PendingAuthorizations.sessionHash(raw) else {
                    throw IdentityProviderFailure.invalid("the id_token's nonce does not match the one sent")
                }
            }
            return try OpenIDConnect.identity(provider.providerId, claims: claims, idToken: idToken, accessToken: credential.accessToken)
        }
        guard let token = credential.accessToken else { throw IdentityProviderFailure.unsupported("no id_token or access_token") }
        switch provider.providerId {
        case .github:
            guard let secret = credential.clientSecret else { throw IdentityProviderFailure.unsupported("github.com has no client secret") }
            return try await gitHub.verify(accessToken: token, clientId: provider.clientId, clientSecret: secret)
        case .facebook:
            guard let secret = credential.clientSecret else { throw IdentityProviderFailure.unsupported("facebook.com has no app secret") }
            return try await facebook.verify(accessToken: token, appId: provider.clientId, appSecret: secret)
        default:
            // Yahoo and every OpenID Connect provider: an access token alone says
            // nothing of the app it was issued to, so it could be replayed from another app.
            throw IdentityProviderFailure.unsupported("a bare access token can not be checked; sign in with the id_token")
        }
    }

    /// An `oidc.*` provider's configured issuer, or a built-in OpenID Connect provider's.
    private func issuer(of provider: IdentityProviderConfig) throws -> String {
        if let issuer = provider.isOpenIDConnect ? provider.issuer : endpoints.issuers[provider.providerId] { return issuer }
        throw IdentityProviderFailure.unsupported("\(provider.providerId) does not sign in through /__/auth/handler yet")
    }
}
