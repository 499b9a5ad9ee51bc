import HearthAuth
import HearthDomain
import HearthWire

/// An OpenID Connect provider by its issuer (Yahoo, Google, any `oidc.*`): the discovery
/// document and key set fetched and cached (an hour; the keys again when a token names one not
/// seen, at most every 30 s: key rotation; one fetch at a time, a failure remembered for 5 s),
/// the code flow with PKCE and a nonce, and the
/// `id_token` verified: signature by the key set, issuer, audience, expiry, nonce. The
/// discovery document's endpoints are checked at every use: `http` or `https` as the issuer,
/// and for a `confined` issuer (an admin's `oidc.*`) on the issuer's origin unless the operator
/// allowlisted their host.
final class OpenIDConnect: Sendable {
    let http: ProviderHTTP
    let clock: @Sendable () -> Int64

    struct Metadata: Sendable {
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
        var userinfoEndpoint: String?
        var supportsS256: Bool
    }

    private let metadata = FetchCache<Metadata>()
    private let keySets = FetchCache<[String: VerificationKey]>()
    static let cacheLifetime: Int64 = 3_600_000
    static let refetchInterval: Int64 = 30_000
    /// Clock skew allowed on `exp` and `iat` (Firebase's five minutes).
    static let skew: Int64 = 300

    init(http: ProviderHTTP, clock: @escaping @Sendable () -> Int64) {
        self.http = http
        self.clock = clock
    }

    func authorizationURL(_ request: AuthorizationRequest, issuer: String, confined: Bool) async throws -> String {
        let document = try await discovered(issuer, confined: confined)
        var scopes = ["openid", "profile", "email"]
        for scope in request.scopes where !scope.isEmpty && !scopes.contains(scope) { scopes.append(scope) }
        var parameters: [(String, String)] = [
            ("client_id", request.provider.clientId), ("redirect_uri", request.redirectURI), ("response_type", "code"),
            ("scope", scopes.joined(separator: " ")), ("state", request.state), ("nonce", request.nonce),
        ]
        if document.supportsS256 { parameters += [("code_challenge", request.codeChallenge), ("code_challenge_method", "S256")] }
        if let language = request.language, !language.isEmpty { parameters.append(("ui_locales", language)) }
        parameters += request.customParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return url(document.authorizationEndpoint, parameters)
    }

    func exchange(_ exchange: CodeExchange, issuer: String, confined: Bool) async throws -> FederatedIdentity {
        let document = try await discovered(issuer, confined: confined)
        var form = [
            "grant_type": "authorization_code", "code": exchange.code, "redirect_uri": exchange.redirectURI,
            "client_id": exchange.provider.clientId, "client_secret": exchange.clientSecret,
        ]
        if document.supportsS256 { form["code_verifier"] = exchange.codeVerifier }
        let answer = try await http.postForm(document.tokenEndpoint, form)
        guard answer.status == 200, let tokens = answer.json?.objectValue else {
            let reason = answer.json?["error"]?.stringValue ?? "status \(answer.status)"
            throw IdentityProviderFailure.refused("the code exchange was refused (\(reason))")
        }
        guard let idToken = tokens["id_token"]?.stringValue else {
            throw IdentityProviderFailure.invalid("the token response has no id_token")
        }
        var claims = try await verify(
            idToken, issuer: issuer, confined: confined, audiences: [exchange.provider.clientId], nonce: exchange.nonce)
        let accessToken = tokens["access_token"]?.stringValue
        if claims["email"] == nil, let accessToken, let userinfo = document.userinfoEndpoint {
            claims = try await withUserInfo(claims, from: userinfo, accessToken: accessToken)
        }
        return try Self.identity(exchange.provider.providerId, claims: claims, idToken: idToken, accessToken: accessToken)
    }

    /// The claims of an `id_token` from `issuer` for one of `audiences`, checked.
    func verify(_ token: String, issuer: String, confined: Bool, audiences accepted: [String], nonce: String?) async throws
        -> [String: JSONValue]
    {
        guard let parts = JWT.decode(token), let keyId = parts.header["kid"]?.stringValue else {
            throw IdentityProviderFailure.invalid("the id_token is not a signed JWT")
        }
        guard let key = try await key(keyId, issuer: issuer, confined: confined),
            key.isValidSignature(parts.signature, for: parts.signingInput, algorithm: parts.header["alg"]?.stringValue)
        else { throw IdentityProviderFailure.invalid("the id_token's signature does not verify") }
        let claims = parts.payload
        let now = clock() / 1000
        // Google writes its issuer with or without the scheme.
        let issuers = issuer == "https://accounts.google.com" ? [issuer, "accounts.google.com"] : [issuer]
        guard let claimed = claims["iss"]?.stringValue, issuers.contains(claimed) else {
            throw IdentityProviderFailure.invalid("the id_token's issuer is not \(issuer)")
        }
        let audiences = claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard audiences.contains(where: accepted.contains) else {
            throw IdentityProviderFailure.invalid("the id_token was issued to another client")
        }
        guard case .int(let expires)? = claims["exp"], expires + Self.skew > now else {
            throw IdentityProviderFailure.invalid("the id_token has expired")
        }
        if case .int(let issued)? = claims["iat"], issued > now + Self.skew {
            throw IdentityProviderFailure.invalid("the id_token was issued in the future")
        }
        if let nonce, claims["nonce"]?.stringValue != nonce {
            throw IdentityProviderFailure.invalid("the id_token's nonce does not match the sign-in's")
        }
        return claims
    }

    /// An `id_token` without the profile (some providers keep it for the userinfo endpoint):
    /// the endpoint's claims fill in what the token lacks, only if they are for the same subject.
    private func withUserInfo(_ claims: [String: JSONValue], from endpoint: String, accessToken: String) async throws
        -> [String: JSONValue]
    {
        let answer = try await http.get(endpoint, bearer: accessToken)
        guard answer.status == 200, let info = answer.json?.objectValue, info["sub"] == claims["sub"] else { return claims }
        return claims.merging(info) { token, _ in token }
    }

    static func identity(_ providerId: ProviderID, claims: [String: JSONValue], idToken: String?, accessToken: String?) throws
        -> FederatedIdentity
    {
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else {
            throw IdentityProviderFailure.invalid("the id_token names no subject")
        }
        return FederatedIdentity(
            providerId: providerId, subject: subject, email: claims["email"]?.stringValue?.lowercased(),
            emailVerified: FederatedIdentity.isTrue(claims["email_verified"]), displayName: claims["name"]?.stringValue,
            photoUrl: claims["picture"]?.stringValue,
            screenName: claims["preferred_username"]?.stringValue ?? claims["nickname"]?.stringValue,
            rawUserInfo: .object(claims), idToken: idToken, accessToken: accessToken)
    }

    private func discovered(_ issuer: String, confined: Bool) async throws -> Metadata {
        let origin: ProviderURL
        do {
            origin = try ProviderURL.issuer(issuer)
        } catch {
            throw IdentityProviderFailure.invalid("\(error)")
        }
        let now = clock()
        let document: Metadata
        if let cached = metadata.last(issuer), now - cached.at < Self.cacheLifetime {
            document = cached.value
        } else {
            document = try await metadata.fetch(issuer, now: now) { [http] in try await Self.discover(issuer, http: http) }
        }
        try check(document, of: origin, confined: confined)
        return document
    }

    /// The endpoints a discovery document names may be used: the issuer's scheme (plain `http`
    /// only if the issuer is), and a confined issuer's origin or a host the operator allowlisted.
    /// (Each fetch also checks the addresses the endpoint resolves to.)
    private func check(_ document: Metadata, of issuer: ProviderURL, confined: Bool) throws {
        let named = [
            ("authorization_endpoint", document.authorizationEndpoint), ("token_endpoint", document.tokenEndpoint),
            ("jwks_uri", document.jwksURI), ("userinfo_endpoint", document.userinfoEndpoint),
        ]
        for case (let name, let text?) in named {
            let endpoint: ProviderURL
            do {
                endpoint = try ProviderURL(text)
            } catch {
                throw IdentityProviderFailure.invalid("\(issuer.text)'s \(name): \(error)")
            }
            guard endpoint.scheme == "https" || issuer.scheme == "http" else {
                throw IdentityProviderFailure.invalid("\(issuer.text)'s \(name) \(text) is not https")
            }
            if confined && !endpoint.sameOrigin(issuer) && !http.policy.allowsHost(endpoint.host) {
                throw IdentityProviderFailure.invalid(
                    "\(issuer.text)'s \(name) \(text) is not on the issuer's host (providerAllowedHosts)")
            }
        }
    }

    private static func discover(_ issuer: String, http: ProviderHTTP) async throws -> Metadata {
        let answer = try await http.get(issuer + "/.well-known/openid-configuration")
        guard answer.status == 200, let document = answer.json?.objectValue,
            document["issuer"]?.stringValue == issuer,
            let authorization = document["authorization_endpoint"]?.stringValue,
            let token = document["token_endpoint"]?.stringValue, let jwks = document["jwks_uri"]?.stringValue
        else { throw IdentityProviderFailure.invalid("\(issuer) has no valid OpenID Connect discovery document") }
        let methods = document["code_challenge_methods_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return Metadata(
            authorizationEndpoint: authorization, tokenEndpoint: token, jwksURI: jwks,
            userinfoEndpoint: document["userinfo_endpoint"]?.stringValue, supportsS256: methods.contains("S256"))
    }

    private func key(_ keyId: String, issuer: String, confined: Bool) async throws -> VerificationKey? {
        let now = clock()
        let cached = keySets.last(issuer)
        if let cached, now - cached.at < Self.cacheLifetime, let key = cached.value[keyId] { return key }
        // An unknown key id: the provider may have rotated; fetch again, but not on every token.
        if let cached, now - cached.at < Self.refetchInterval { return cached.value[keyId] }
        let document = try await discovered(issuer, confined: confined)
        let keys = try await keySets.fetch(issuer, now: now) { [http] in
            let answer = try await http.get(document.jwksURI)
            guard answer.status == 200, let keys = answer.json?["keys"]?.arrayValue else {
                throw IdentityProviderFailure.invalid("\(issuer)'s key set can not be read")
            }
            var byId: [String: VerificationKey] = [:]
            for jwk in keys.compactMap(\.objectValue) {
                if let id = jwk["kid"]?.stringValue, let key = VerificationKey(jwk: jwk) { byId[id] = key }
            }
            return byId
        }
        return keys[keyId]
    }
}
