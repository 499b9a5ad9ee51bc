import HearthAuth
import HearthDomain
import NIOCore

/// Hearth's identity providers over HTTP: GitHub's OAuth apps, and OpenID Connect for Yahoo,
/// Google and every `oidc.*` provider.
public final class OAuthGateway: IdentityProviderGateway {
    let endpoints: ProviderEndpoints
    let gitHub: GitHub
    let openID: OpenIDConnect

    public init(endpoints: ProviderEndpoints, timeoutSeconds: Int64 = 10, clock: @escaping @Sendable () -> Int64) {
        let http = ProviderHTTP(timeout: .seconds(timeoutSeconds))
        self.endpoints = endpoints
        gitHub = GitHub(http: http, web: endpoints.gitHubWeb, api: endpoints.gitHubAPI)
        openID = OpenIDConnect(http: http, clock: clock)
    }

    public func authorizationURL(_ request: AuthorizationRequest) async throws -> String {
        if request.provider.providerId == .github { return gitHub.authorizationURL(request) }
        return try await openID.authorizationURL(request, issuer: try issuer(of: request.provider))
    }

    public func exchange(_ exchange: CodeExchange) async throws -> FederatedIdentity {
        if exchange.provider.providerId == .github { return try await gitHub.exchange(exchange) }
        return try await openID.exchange(exchange, issuer: try issuer(of: exchange.provider))
    }

    /// An `oidc.*` provider's configured issuer, or a built-in OpenID Connect provider's.
    private func issuer(of provider: IdentityProviderConfig) throws -> String {
        if let issuer = provider.isOpenIDConnect ? provider.issuer : endpoints.issuers[provider.providerId] { return issuer }
        throw IdentityProviderFailure.invalid("\(provider.providerId) does not sign in through /__/auth/handler yet")
    }
}
