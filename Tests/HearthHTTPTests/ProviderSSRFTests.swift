import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthTesting
import HearthWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// An admin's `oidc.*` issuer aims Hearth's outbound calls: they must reach only public https
/// hosts (or what the operator allowlisted), the discovery document's endpoints only the
/// issuer's host, and an unauthenticated app must not learn what answered where.
@Suite("identity providers: no server-side request forgery through issuers")
struct ProviderSSRFTests {
    static let admin = HeadfulSignInTests.productionAdmin

    /// Creates `oidc.corp` (code flow, with a secret) at `issuer`, anew.
    static func setIssuer(_ api: APIClient, _ issuer: String, production: Bool) async throws -> Reply {
        _ = try await api.send(
            .delete, "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/oauthIdpConfigs/oidc.corp", body: nil,
            headers: production ? admin : APIClient.admin)
        return try await api.send(
            .post, "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/oauthIdpConfigs?oauthIdpConfigId=oidc.corp",
            body: ByteBuffer(
                bytes: JSONValue.object([
                    "enabled": true, "clientId": "corp-client", "issuer": .string(issuer), "responseType": ["code": true],
                    "clientSecret": .string(FakeProviders.clientSecret),
                ]).encoded()), headers: production ? admin : APIClient.admin)
    }

    /// Opens the handler for `oidc.corp`: the provider's URL, or the error the app is handed.
    static func start(_ api: APIClient) async throws -> (authorization: String?, error: String?) {
        let location = try await HeadfulSignInTests.location(api, HeadfulSignInTests.handlerURL(provider: "oidc.corp"))
        guard location.hasPrefix("com.googleusercontent.apps.") else { return (location, nil) }
        let inner = HeadfulSignInTests.query(HeadfulSignInTests.query(location)["deep_link_id"] ?? "")
        let error = JSONValue.parse(Array((inner["firebaseError"] ?? "").utf8))?["message"]?.stringValue
        return (nil, error)
    }

    /// The whole flow for `oidc.corp`: start, consent, `signInWithIdp`.
    static func signIn(_ api: APIClient, _ providers: FakeProviders) async throws -> Reply? {
        guard let authorization = try await start(api).authorization else { return nil }
        let app = try await HeadfulSignInTests.appCallback(api, try await providers.consent(at: authorization))
        return try await api.v1(
            "signInWithIdp",
            [
                "requestUri": .string(app["link"] ?? ""), "sessionId": .string(HeadfulSignInTests.sessionID),
                "postBody": "providerId=oidc.corp", "returnSecureToken": true,
            ])
    }

    @Test("an issuer with a query, a fragment or user info is refused, by the API and in the config file")
    func issuerShape() async throws {
        try await HeadfulSignInTests.run { _, api, providers in
            let base = String(providers.issuer.dropLast("/oidc".count))
            for issuer in [
                base + "/internal/secret?", base + "/internal/secret#", base + "/internal/secret?x=", "http://user:pw@127.0.0.1/oidc",
            ] {
                let reply = try await Self.setIssuer(api, issuer, production: false)
                #expect(reply.errorCode == "INVALID_CONFIG", "\(issuer)")
            }
            // Had one been taken, opening the handler would have fetched the internal path.
            _ = try await Self.start(api)
            #expect(providers.hits("/internal/secret") == 0)
        }
        var configuration = ServerSettings()
        configuration.providers.endpoints = ["yahoo.com": ["issuer": "https://login.example/x?"]]
        #expect(throws: ConfigurationError.self) { try configuration.validated() }
        configuration.providers.endpoints = ["github.com": ["apiUrl": "https://user@api.example"]]
        #expect(throws: ConfigurationError.self) { try configuration.validated() }
    }

    @Test("a discovery document's endpoints: another host, or a Unix socket, gets neither a request nor the client secret")
    func discoveryEndpoints() async throws {
        try await HeadfulSignInTests.run { _, api, providers in
            let base = String(providers.issuer.dropLast("/oidc".count))
            #expect(try await Self.setIssuer(api, providers.issuer, production: false).status == 200)
            // The same server by another name is another host.
            providers.discovery(["token_endpoint": base.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/oidc/elsewhere"])
            let reply = try await Self.signIn(api, providers)
            #expect(reply?["idToken"] == nil)
            #expect(providers.hits("/oidc/elsewhere") == 0)
        }
        try await HeadfulSignInTests.run { _, api, providers in
            #expect(try await Self.setIssuer(api, providers.issuer, production: false).status == 200)
            try await UnixSocketServer.serve { socket in
                providers.discovery(["token_endpoint": "http+unix://\(socket.encodedPath)/token"])
                let reply = try await Self.signIn(api, providers)
                #expect(reply?["idToken"] == nil)
                #expect(socket.requests == 0, "Hearth posted the code and the client secret to a Unix socket")
            }
        }
        // The operator may allow more hosts (an issuer whose token endpoint lives elsewhere).
        try await HeadfulSignInTests.run(configure: { configuration, _ in configuration.providers.allowedHosts = ["localhost"] }) {
            _, api, providers in
            let base = String(providers.issuer.dropLast("/oidc".count))
            #expect(try await Self.setIssuer(api, providers.issuer, production: false).status == 200)
            providers.discovery(["token_endpoint": base.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/oidc/elsewhere"])
            _ = try await Self.signIn(api, providers)
            #expect(providers.hits("/oidc/elsewhere") == 1)
        }
    }

    @Test("production: loopback and private addresses are refused after DNS resolution, unless the operator allowlists them")
    func addressesAfterResolution() async throws {
        let production: @Sendable (inout ServerSettings, String) -> Void = { configuration, _ in
            configuration.providers.allowedNetworks = []
        }
        try await HeadfulSignInTests.run(timeoutSeconds: 30, production: true, configure: production) { _, api, providers in
            let port = URLComponents(string: providers.issuer)!.port!
            // `localhost` is a name: only its resolution says it is loopback.
            for issuer in ["http://localhost:\(port)/oidc", providers.issuer] {
                #expect(try await Self.setIssuer(api, issuer, production: true).status == 200)
                let started = try await Self.start(api)
                #expect(started.error?.contains(SignInService.providerFailureMessage) == true, "\(issuer): \(started)")
            }
            #expect(providers.hits("/oidc/.well-known/openid-configuration") == 0)
            // The cloud metadata service (link-local) is refused before any connection is tried.
            #expect(try await Self.setIssuer(api, "https://169.254.169.254", production: true).status == 200)
            let clock = ContinuousClock.now
            #expect(try await Self.start(api).error?.contains(SignInService.providerFailureMessage) == true)
            // Refused before any connection: well under the 30 s a waited-out attempt takes, with
            // room for a loaded host (a CI run took 11.5 s here with every suite running at once).
            #expect(ContinuousClock.now - clock < .seconds(25), "no connection attempt waited out the 30 s timeout")
        }
        let allowlisted: @Sendable (inout ServerSettings, String) -> Void = { configuration, _ in
            configuration.providers.allowedNetworks = ["127.0.0.0/8", "::1"]
        }
        try await HeadfulSignInTests.run(production: true, configure: allowlisted) { _, api, providers in
            let port = URLComponents(string: providers.issuer)!.port!
            #expect(try await Self.setIssuer(api, "http://localhost:\(port)/oidc", production: true).status == 200)
            // Allowlisted, the fetch is made (the issuer then names itself 127.0.0.1, not localhost).
            _ = try await Self.start(api)
            #expect(providers.hits("/oidc/.well-known/openid-configuration") == 1)
            #expect(try await Self.setIssuer(api, providers.issuer, production: true).status == 200)
            let reply = try await Self.signIn(api, providers)
            #expect(reply?.status == 200 && reply?.string("federatedId") == "yahoo-user-77", "\(String(describing: reply?.json))")
        }
    }

    @Test("one error for every failure: a closed port and an open one that serves no issuer look the same to the app")
    func oneGenericError() async throws {
        try await HeadfulSignInTests.run(timeoutSeconds: 3) { _, api, providers in
            let base = String(providers.issuer.dropLast("/oidc".count))
            let closed = try freePort()
            var errors: [String] = []
            for issuer in ["http://127.0.0.1:\(closed)/oidc", base + "/nothing", base + "/internal/secret"] {
                #expect(try await Self.setIssuer(api, issuer, production: false).status == 200)
                errors.append(try await Self.start(api).error ?? "no error")
            }
            #expect(Set(errors).count == 1, "\(errors)")
            #expect(errors.first?.contains(SignInService.providerFailureMessage) == true, "\(errors)")
        }
    }
}

/// An HTTP server on a Unix domain socket that counts the requests it gets.
final class UnixSocketServer: Sendable {
    let path: String
    private let count = Mutex(0)

    var requests: Int { count.withLock { $0 } }
    /// The path as AsyncHTTPClient takes it in an `http+unix` URL's host.
    var encodedPath: String { path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path }

    private init(path: String) { self.path = path }

    static func serve(_ body: @escaping @Sendable (UnixSocketServer) async throws -> Void) async throws {
        let directory = TemporaryDirectory("unix")
        let server = UnixSocketServer(path: directory.path + "/provider.sock")
        let router = Router()
        router.post("/token") { _, _ in
            server.count.withLock { $0 += 1 }
            return FakeProviders.json(["access_token": "internal", "id_token": "internal"])
        }
        let app = Application(router: router, configuration: .init(address: .unixDomainSocket(path: server.path)))
        let running = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { running.cancel() }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: server.path) {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await body(server)
        _ = directory.path  // kept until the server is done with its socket
    }
}
