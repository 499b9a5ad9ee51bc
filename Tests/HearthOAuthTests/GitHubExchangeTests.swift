import HearthAuth
import HearthDomain
import HearthOAuth
import HearthWire
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// The gateway's GitHub flow over real HTTP, against a fake GitHub on a loopback port: the code
/// exchange with PKCE and the client secret, then `/user` and `/user/emails`.
@Suite("identity providers: GitHub's code exchange over HTTP")
struct GitHubExchangeTests {
    /// What the fake GitHub was sent.
    final class Seen: Sendable {
        let forms = Mutex<[[String: String]]>([])
        let bearers = Mutex<[String]>([])
    }

    static func fakeGitHub(_ seen: Seen) -> some ApplicationProtocol {
        let router = Router()
        router.post("/login/oauth/access_token") { request, context -> Response in
            let body = try await request.body.collect(upTo: 65_536)
            let form = Dictionary(FormEncoding.fields(String(buffer: body)).map { ($0.name, $0.value) }) { $1 }
            seen.forms.withLock { $0.append(form) }
            let answer: JSONValue =
                form["code"] == "good-code" && form["client_secret"] == "app-secret" && form["code_verifier"] == "verifier"
                ? ["access_token": "gho_token", "token_type": "bearer"] : ["error": "bad_verification_code"]
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: answer.encoded())))
        }
        router.get("/user") { request, context -> Response in
            seen.bearers.withLock { $0.append(request.headers[.authorization] ?? "") }
            let user: JSONValue = ["id": 4242, "login": "octo", "name": "Octo Cat", "email": .null]
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: user.encoded())))
        }
        router.get("/user/emails") { _, _ -> Response in
            let emails: JSONValue = [
                ["email": "old@example.com", "primary": false, "verified": true],
                ["email": "Octo@Example.com", "primary": true, "verified": true],
            ]
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: emails.encoded())))
        }
        return Application(router: router)
    }

    static func exchange(_ code: String, port: Int) -> (OAuthGateway, CodeExchange) {
        let base = "http://127.0.0.1:\(port)"
        let endpoints = try! ProviderEndpoints(overrides: ["github.com": ["webUrl": .string(base), "apiUrl": .string(base)]])
        // 30 s: nothing here tests the timeout, and under the whole suite's load on two cores the
        // loopback fake once took longer than 5 s to answer.
        let gateway = OAuthGateway(
            endpoints: endpoints, network: ProviderNetworkPolicy(allowedNetworks: ProviderNetworkPolicy.loopback), timeoutSeconds: 30,
            clock: { 1_800_000_000_000 })
        let provider = IdentityProviderConfig(providerId: .github, enabled: true, clientId: "app-id")
        return (
            gateway,
            CodeExchange(
                provider: provider, clientSecret: "app-secret", code: code, redirectURI: "https://auth.example.com/__/auth/handler",
                codeVerifier: "verifier", nonce: "n")
        )
    }

    @Test("a good code becomes GitHub's user with its verified primary email; the token reaches only the API")
    func goodCode() async throws {
        let seen = Seen()
        try await Self.fakeGitHub(seen).test(.live) { client in
            let (gateway, exchange) = Self.exchange("good-code", port: client.port!)
            let identity = try await gateway.exchange(exchange)
            #expect(identity.providerId == .github && identity.subject == "4242")
            #expect(identity.email == "octo@example.com" && identity.emailVerified)
            #expect(identity.displayName == "Octo Cat" && identity.screenName == "octo")
            let form = try #require(seen.forms.withLock { $0.first })
            #expect(form["client_id"] == "app-id" && form["redirect_uri"] == "https://auth.example.com/__/auth/handler")
            #expect(seen.bearers.withLock { $0 } == ["Bearer gho_token"])
        }
    }

    @Test("a code GitHub refuses is the provider's refusal, and no profile is asked for")
    func refusedCode() async throws {
        let seen = Seen()
        try await Self.fakeGitHub(seen).test(.live) { client in
            let (gateway, exchange) = Self.exchange("used-code", port: client.port!)
            await #expect {
                try await gateway.exchange(exchange)
            } throws: { error in
                guard case IdentityProviderFailure.refused(let reason) = error else { return false }
                return reason.contains("bad_verification_code")
            }
            #expect(seen.bearers.withLock { $0 }.isEmpty)
        }
    }

    @Test("a provider on a network not allowed is never called")
    func networkNotAllowed() async throws {
        let seen = Seen()
        try await Self.fakeGitHub(seen).test(.live) { client in
            let (_, exchange) = Self.exchange("good-code", port: client.port!)
            let base = "http://127.0.0.1:\(client.port!)"
            let strict = OAuthGateway(
                endpoints: try ProviderEndpoints(overrides: ["github.com": ["webUrl": .string(base), "apiUrl": .string(base)]]),
                network: ProviderNetworkPolicy(), timeoutSeconds: 5, clock: { 1_800_000_000_000 })
            await #expect(throws: IdentityProviderFailure.self) { try await strict.exchange(exchange) }
            #expect(seen.forms.withLock { $0 }.isEmpty)
        }
    }
}
