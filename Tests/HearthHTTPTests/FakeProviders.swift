import Foundation
import HearthAuth
import HearthWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// A fake GitHub (OAuth app: authorize, token with PKCE, `/user`, `/user/emails`) and a fake
/// OpenID Connect issuer (discovery, key set with its own ES256 key, authorize, token with a
/// signed `id_token`), served over real HTTP on a loopback port, as Hearth's gateway reaches them.
final class FakeProviders: Sendable {
    /// How the issuer's next token answers misbehave.
    enum Fault: Sendable {
        case none, wrongAudience, expired, badSignature, wrongNonce, hang
        /// A 307 to another endpoint, which would get the form (and the secret) again if followed.
        case redirect
        /// The profile only at the userinfo endpoint, not in the `id_token`.
        case profileAtUserInfo
    }

    struct Grant: Sendable {
        var clientId: String
        var redirectURI: String
        var challenge: String?
        var nonce: String?
        var used = false
    }

    let key: SigningKey
    let forger: SigningKey
    private let grants = Mutex<[String: Grant]>([:])
    private let fault = Mutex(Fault.none)
    private let keySetDown = Mutex(false)
    private let hangReleased = Mutex(false)
    private let hits = Mutex<[String: Int]>([:])
    private let discoveryOverrides = Mutex<[String: String]>([:])

    /// Replaces fields of the discovery document (`token_endpoint`, `jwks_uri`, …).
    func discovery(_ overrides: [String: String]) { discoveryOverrides.withLock { $0 = overrides } }

    /// The query of every authorization request the provider received, in order, as its
    /// name-value pairs (repeats kept).
    private let authorizations = Mutex<[[(name: String, value: String)]]>([])
    func authorizationRequests() -> [[(name: String, value: String)]] { authorizations.withLock { $0 } }

    /// How many requests reached `path` (`/oidc/jwks`, `/oidc/elsewhere`).
    func hits(_ path: String) -> Int { hits.withLock { $0[path] ?? 0 } }
    func keySet(down: Bool) { keySetDown.withLock { $0 = down } }
    private func hit(_ path: String) { hits.withLock { $0[path, default: 0] += 1 } }
    private let issuerURL = Mutex("")
    private let client = Mutex<(any TestClientProtocol)?>(nil)
    /// Unix seconds as Hearth's (test) clock tells them: tokens are issued in its time.
    private let clock = Mutex<@Sendable () -> Int64>({ Int64(Date().timeIntervalSince1970) })

    func useClock(_ now: @escaping @Sendable () -> Int64) { clock.withLock { $0 = now } }
    static let clientSecret = "provider-secret-0123456789"

    init() throws {
        key = try SigningKey.generate(.es256)
        forger = try SigningKey.generate(.es256)
    }

    func misbehave(_ next: Fault) { fault.withLock { $0 = next } }
    /// Ends a `.hang` early, so the test does not wait it out when it stops the provider.
    func releaseHang() { hangReleased.withLock { $0 = true } }

    var issuer: String { issuerURL.withLock { $0 } }

    /// Serves the fakes on a loopback port and runs `body` with their base URL.
    func serve(_ body: @escaping @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.get("/gh/login/oauth/authorize") { request, _ in self.authorize(request) }
        router.get("/oidc/authorize") { request, _ in self.authorize(request) }
        router.post("/gh/login/oauth/access_token") { request, _ in try await self.gitHubToken(request) }
        router.get("/gh/api/v3/user") { request, _ in
            try self.bearer(request)
            return Self.json([
                "id": 4242, "login": "octocat", "name": "Mona Lisa", "avatar_url": "https://img.example/octo.png", "email": .null,
            ])
        }
        router.get("/gh/api/v3/user/emails") { request, _ in
            try self.bearer(request)
            return Self.json([
                ["email": "mona@old.example", "primary": false, "verified": true],
                ["email": "Mona@Example.com", "primary": true, "verified": true],
            ])
        }
        router.post("/gh/api/v3/applications/{client}/token") { request, context in
            // GitHub's check-a-token: the app's own credentials, and a token it issued.
            let client = context.parameters.get("client") ?? ""
            let basic = "Basic " + Data("\(client):\(Self.clientSecret)".utf8).base64EncodedString()
            let body = JSONValue.parse(try await request.body.collect(upTo: 1 << 16).readableBytesView)
            guard request.headers[.authorization] == basic, body?["access_token"] == "gho_fake_token" else {
                return Self.json(status: .notFound, ["message": "Not Found"])
            }
            return Self.json(["id": 1, "token": "gho_fake_token", "app": ["client_id": .string(client)]])
        }
        router.get("/fb/debug_token") { request, _ in
            let query = Dictionary(FormEncoding.fields(request.uri.query ?? "").map { ($0.name, $0.value) }) { first, _ in first }
            guard query["access_token"] == "fb-app|\(Self.clientSecret)" else { return Self.json(status: .badRequest, ["error": "app"]) }
            let app = query["input_token"] == "fb-token" ? "fb-app" : "someone-else"
            return Self.json(["data": ["is_valid": true, "app_id": .string(app), "user_id": "fb-1"]])
        }
        router.get("/fb/me") { request, _ in
            guard request.uri.query?.contains("access_token=fb-token") == true else { return Self.json(status: .badRequest, [:]) }
            return Self.json([
                "id": "fb-1", "name": "Fae", "email": "Fae@FB.example", "picture": ["data": ["url": "https://img.example/fae.png"]],
            ])
        }
        router.get("/oidc/.well-known/openid-configuration") { _, _ in
            self.hit("/oidc/.well-known/openid-configuration")
            let issuer = self.issuer
            var document: [String: JSONValue] = [
                "issuer": .string(issuer), "authorization_endpoint": .string(issuer + "/authorize"),
                "token_endpoint": .string(issuer + "/token"), "jwks_uri": .string(issuer + "/jwks"),
                "userinfo_endpoint": .string(issuer + "/userinfo"),
                "code_challenge_methods_supported": ["S256"],
            ]
            for (name, value) in self.discoveryOverrides.withLock({ $0 }) { document[name] = .string(value) }
            return Self.json(.object(document))
        }
        // What an issuer's `?` or `#` could aim the discovery fetch at: a path of the same host.
        router.get("/internal/secret/**") { _, _ in
            self.hit("/internal/secret")
            return Self.json(["secret": "internal"])
        }
        router.get("/internal/secret") { _, _ in
            self.hit("/internal/secret")
            return Self.json(["secret": "internal"])
        }
        router.get("/oidc/jwks") { _, _ in
            self.hit("/oidc/jwks")
            if self.keySetDown.withLock({ $0 }) {
                try await Task.sleep(for: .milliseconds(200))
                return Self.json(status: .serviceUnavailable, [:])
            }
            return Self.json(["keys": [self.key.publicJWK]])
        }
        router.post("/oidc/elsewhere") { request, _ in
            self.hit("/oidc/elsewhere")
            let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
            if body.contains(Self.clientSecret) { self.hit("/oidc/elsewhere with the client secret") }
            return Self.json(["access_token": "stolen", "id_token": "stolen"])
        }
        router.get("/oidc/userinfo") { request, _ in
            guard request.headers[.authorization] == "Bearer yahoo-access" else { return Self.json(status: .unauthorized, [:]) }
            return Self.json(["sub": "yahoo-user-77", "email": "Yuki@Yahoo.example", "email_verified": true, "name": "Yuki"])
        }
        router.post("/oidc/token") { request, _ in try await self.openIDToken(request) }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let base = "http://127.0.0.1:\(client.port!)"
            self.issuerURL.withLock { $0 = base + "/oidc" }
            self.client.withLock { $0 = client }
            try await body(base)
        }
    }

    /// An `id_token` as the issuer signs them (an app's Google credential).
    func idToken(audience: String, nonce: String?, subject: String = "google-user-9", email: String = "ann@gmail.com") throws -> String {
        let now = clock.withLock { $0 }()
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(subject), "email": .string(email),
            "email_verified": true, "name": "Ann", "iat": .int(now), "exp": .int(now + 3600),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        return try JWT.sign(payload: .object(claims), with: key)
    }

    /// The user at the provider: opens its authorize URL (over HTTP) and consents at once; the
    /// redirect back to Hearth, as a path and query of Hearth's server.
    func consent(at authorization: String) async throws -> String {
        let url = URLComponents(string: authorization)!
        let client = self.client.withLock { $0 }!
        let response = try await client.executeRequest(
            uri: url.path + "?" + (url.percentEncodedQuery ?? ""), method: .get, headers: [:], body: nil)
        let back = URLComponents(string: response.headers[.location] ?? "")!
        return back.path + "?" + (back.percentEncodedQuery ?? "")
    }

    /// The user consents at once: back to `redirect_uri` with a code bound to the request.
    private func authorize(_ request: Request) -> Response {
        let fields = FormEncoding.fields(request.uri.query ?? "").map { (name: $0.name, value: $0.value) }
        authorizations.withLock { $0.append(fields) }
        let query = Dictionary(fields.map { ($0.name, $0.value) }) { first, _ in first }
        guard let redirect = query["redirect_uri"], let state = query["state"], let client = query["client_id"] else {
            return Response(status: .badRequest)
        }
        let code = UUID().uuidString
        grants.withLock {
            $0[code] = Grant(clientId: client, redirectURI: redirect, challenge: query["code_challenge"], nonce: query["nonce"])
        }
        return Response(status: .found, headers: [.location: redirect + "?code=\(code)&state=\(FormEncoding.percentEncoded(state))"])
    }

    /// The grant a token request redeems, if everything matches (once).
    private func redeem(_ request: Request) async throws -> Grant? {
        let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
        let form = Dictionary(FormEncoding.fields(body).map { ($0.name, $0.value) }) { first, _ in first }
        guard let code = form["code"], form["client_secret"] == Self.clientSecret else { return nil }
        return grants.withLock { grants -> Grant? in
            guard var grant = grants[code], !grant.used, grant.clientId == form["client_id"],
                grant.redirectURI == form["redirect_uri"],
                grant.challenge == nil || grant.challenge == PendingAuthorizations.codeChallenge(form["code_verifier"] ?? "")
            else { return nil }
            grant.used = true
            grants[code] = grant
            return grant
        }
    }

    private func gitHubToken(_ request: Request) async throws -> Response {
        guard try await redeem(request) != nil else { return Self.json(["error": "bad_verification_code"]) }
        return Self.json(["access_token": "gho_fake_token", "token_type": "bearer", "scope": "read:user,user:email"])
    }

    private func bearer(_ request: Request) throws {
        guard request.headers[.authorization] == "Bearer gho_fake_token" else { throw HTTPError(.unauthorized) }
    }

    private func openIDToken(_ request: Request) async throws -> Response {
        let fault = self.fault.withLock { current in
            defer { current = .none }
            return current
        }
        // Two minutes, far longer than any provider timeout a test sets: only the timeout (or
        // the test, once it has its answer) ends the wait.
        if fault == .hang {
            for _ in 0..<1200 where !hangReleased.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(100)) }
        }
        if fault == .redirect { return Response(status: .temporaryRedirect, headers: [.location: issuer + "/elsewhere"]) }
        guard let grant = try await redeem(request) else {
            return Self.json(status: .badRequest, ["error": "invalid_grant"])
        }
        let now = clock.withLock { $0 }()
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(fault == .wrongAudience ? "someone-else" : grant.clientId),
            "sub": "yahoo-user-77", "email": "Yuki@Yahoo.example", "email_verified": true, "name": "Yuki",
            "nonce": .string(fault == .wrongNonce ? "stale" : grant.nonce ?? ""),
            "iat": .int(now), "exp": .int(fault == .expired ? now - 3600 : now + 3600),
        ]
        if fault == .profileAtUserInfo {
            for claim in ["email", "email_verified", "name"] { claims[claim] = nil }
        }
        var token = try JWT.sign(payload: .object(claims), with: fault == .badSignature ? forger : key)
        if fault == .badSignature {
            // Signed by another key under this key's id.
            let parts = token.split(separator: ".")
            let header: JSONValue = ["alg": "ES256", "kid": .string(key.keyID), "typ": "JWT"]
            token = Base64URL.encode(header.encoded()) + "." + parts[1] + "." + parts[2]
        }
        return Self.json(["access_token": "yahoo-access", "token_type": "Bearer", "id_token": .string(token)])
    }

    static func json(status: HTTPResponse.Status = .ok, _ body: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}
