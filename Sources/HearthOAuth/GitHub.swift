import HearthAuth
import HearthDomain
import HearthWire

/// GitHub's OAuth app flow (github.com or a GitHub Enterprise Server by `webUrl` and `apiUrl`):
/// authorize with PKCE, exchange the code, then the profile from `/user` and the verified
/// primary email from `/user/emails`.
struct GitHub: Sendable {
    let http: ProviderHTTP
    let web: String
    let api: String

    static let defaultScopes = ["read:user", "user:email"]

    func authorizationURL(_ request: AuthorizationRequest) -> String {
        var scopes = Self.defaultScopes
        for scope in request.scopes where !scope.isEmpty && !scopes.contains(scope) { scopes.append(scope) }
        let parameters: [(String, String)] =
            [
                ("client_id", request.provider.clientId), ("redirect_uri", request.redirectURI),
                ("scope", scopes.joined(separator: " ")), ("state", request.state),
                ("code_challenge", request.codeChallenge), ("code_challenge_method", "S256"),
            ] + request.customParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return url(web + "/login/oauth/authorize", parameters)
    }

    func exchange(_ exchange: CodeExchange) async throws -> FederatedIdentity {
        let answer = try await http.postForm(
            web + "/login/oauth/access_token",
            [
                "client_id": exchange.provider.clientId, "client_secret": exchange.clientSecret, "code": exchange.code,
                "redirect_uri": exchange.redirectURI, "code_verifier": exchange.codeVerifier,
            ])
        // GitHub answers 200 with an `error` for a bad or used code.
        guard answer.status == 200, let token = answer.json?["access_token"]?.stringValue, !token.isEmpty else {
            let reason = answer.json?["error"]?.stringValue ?? "status \(answer.status)"
            throw IdentityProviderFailure.refused("the code exchange was refused (\(reason))")
        }
        return try await identity(accessToken: token)
    }

    /// An access token an app brings: GitHub must confirm it was issued to the configured OAuth
    /// app (its check-a-token API, with the client id and secret). Firebase accepts any token
    /// GitHub honours, so one obtained by another app would sign in as its user here too.
    func verify(accessToken token: String, clientId: String, clientSecret: String) async throws -> FederatedIdentity {
        let check = try await http.postJSON(
            api + "/applications/\(FormEncoding.percentEncoded(clientId))/token", ["access_token": .string(token)], user: clientId,
            password: clientSecret)
        guard check.status == 200, check.json?["app"]?["client_id"]?.stringValue == clientId else {
            throw IdentityProviderFailure.refused("GitHub did not confirm the access token was issued to this app")
        }
        return try await identity(accessToken: token)
    }

    /// Who an access token belongs to: `/user`, and `/user/emails` for a verified address.
    func identity(accessToken token: String) async throws -> FederatedIdentity {
        let user = try await http.get(api + "/user", bearer: token, accept: "application/vnd.github+json")
        guard user.status == 200, let profile = user.json?.objectValue, case .int(let id)? = profile["id"] else {
            throw IdentityProviderFailure.refused("GitHub did not accept the access token (status \(user.status))")
        }
        let emails = try await http.get(api + "/user/emails", bearer: token, accept: "application/vnd.github+json")
        let listed = emails.status == 200 ? emails.json?.arrayValue?.compactMap(\.objectValue) ?? [] : []
        let primary = listed.first { $0["primary"] == .bool(true) }
        let email = primary?["email"]?.stringValue ?? profile["email"]?.stringValue
        return FederatedIdentity(
            providerId: .github, subject: String(id), email: email?.lowercased(),
            emailVerified: primary?["verified"] == .bool(true), displayName: profile["name"]?.stringValue,
            photoUrl: profile["avatar_url"]?.stringValue, screenName: profile["login"]?.stringValue,
            rawUserInfo: .object(profile), idToken: nil, accessToken: token)
    }
}
