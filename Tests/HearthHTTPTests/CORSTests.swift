import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthTesting
import HearthWire
import HummingbirdTesting
import NIOCore
import Testing

/// CORS as the Auth Emulator answers it (development) and restricted to the project's
/// authorized domains (production). The browser itself is tested end to end (test_browser_cors.py).
@Suite("CORS")
struct CORSTests {
    static let signUp = "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=test-key"

    static func preflight(_ api: APIClient, _ uri: String, origin: String, privateNetwork: Bool = false) async throws
        -> TestResponse
    {
        var headers: HTTPFields = [
            .origin: origin, .accessControlRequestMethod: "POST", .accessControlRequestHeaders: "content-type,x-client-version",
        ]
        if privateNetwork { headers[HTTPField.Name("Access-Control-Request-Private-Network")!] = "true" }
        return try await api.client.executeRequest(uri: uri, method: .options, headers: headers, body: nil)
    }

    static func post(_ api: APIClient, _ uri: String, origin: String, _ body: JSONValue) async throws -> TestResponse {
        try await api.client.executeRequest(
            uri: uri, method: .post, headers: [.origin: origin, .contentType: "application/json"], body: ByteBuffer(bytes: body.encoded()))
    }

    @Test("development: every route answers a preflight for any origin; answers and errors carry the origin")
    func development() async throws {
        try await APIHarness.run { _, api in
            for uri in [Self.signUp, "/securetoken.googleapis.com/v1/token?key=test-key", "/no/such/route"] {
                let preflight = try await Self.preflight(api, uri, origin: "http://localhost:5173")
                #expect(preflight.status == .noContent, "\(uri)")
                #expect(preflight.headers[.accessControlAllowOrigin] == "http://localhost:5173")
                #expect(preflight.headers[.accessControlAllowHeaders] == "content-type,x-client-version")
                #expect(preflight.headers[.accessControlAllowMethods]?.contains("POST") == true)
                #expect(preflight.headers[.accessControlMaxAge] == "3600")
                #expect(preflight.headers[HTTPField.Name("Access-Control-Allow-Private-Network")!] == nil)
            }
            let plain = try await Self.preflight(api, Self.signUp, origin: "https://app.example.org")
            #expect(plain.headers[HTTPField.Name("Access-Control-Allow-Private-Network")!] == nil)

            let created = try await Self.post(
                api, Self.signUp, origin: "https://app.example.org", ["email": "c@example.com", "password": "cors-pass-1"])
            #expect(created.status == .ok && created.headers[.accessControlAllowOrigin] == "https://app.example.org")
            #expect(created.headers[values: .vary].contains("Origin"))
            let refused = try await Self.post(
                api, Self.signUp, origin: "https://app.example.org", ["email": "c@example.com", "password": "cors-pass-1"])
            #expect(refused.status == .badRequest && refused.headers[.accessControlAllowOrigin] == "https://app.example.org")
            // Calls without an Origin (mobile SDKs, Admin SDKs) are untouched.
            let native = try await api.signUp(email: "native@example.com")
            #expect(native.status == 200)
        }
    }

    static let privateNetworkAllowed = HTTPField.Name("Access-Control-Allow-Private-Network")!

    static let ownerLookupPath = "/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:lookup"

    static func ownerLookup(_ api: APIClient, origin: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer owner", .contentType: "application/json"]
        if let origin { headers[.origin] = origin }
        return try await api.client.executeRequest(
            uri: ownerLookupPath, method: .post, headers: headers,
            body: ByteBuffer(bytes: JSONValue.object(["email": ["a@example.com"]]).encoded()))
    }

    @Test("development: a public page may not reach a developer's Hearth, nor use Bearer owner, unless the developer opts in")
    func developmentBrowsers() async throws {
        let lookup = Self.ownerLookupPath
        try await APIHarness.run { _, api in
            let preflight = try await Self.preflight(api, lookup, origin: "https://evil.example", privateNetwork: true)
            #expect(preflight.status == .forbidden && preflight.headers[Self.privateNetworkAllowed] == nil)
            #expect(String(buffer: preflight.body).contains("developmentBrowserAdmin"))
            let fromPage = try await Self.ownerLookup(api, origin: "https://evil.example")
            #expect(fromPage.status == .forbidden && String(buffer: fromPage.body).contains("PERMISSION_DENIED"))
            #expect(try await Self.ownerLookup(api, origin: "http://localhost:3000").status == .forbidden)
            // The Admin SDKs send no Origin: untouched.
            #expect(try await Self.ownerLookup(api, origin: nil).status == .ok)
            // Nor the emulator's routes, which take no credential at all (a simple GET: no preflight).
            let codes = "/emulator/v1/projects/demo-hearth/oobCodes"
            let fromSite = try await api.client.executeRequest(
                uri: codes, method: .get, headers: [.origin: "https://evil.example"], body: nil)
            #expect(fromSite.status == .forbidden && !String(buffer: fromSite.body).contains("oobCodes"))
            let wipe = try await api.client.executeRequest(
                uri: "/emulator/v1/projects/demo-hearth/accounts", method: .delete, headers: [.origin: "https://evil.example"], body: nil)
            #expect(wipe.status == .forbidden)
            #expect(try await api.client.executeRequest(uri: codes, method: .get, headers: [:], body: nil).status == .ok)
        }
        try await APIHarness.run(configure: { $0.listen.developmentBrowserAdmin = true }) { _, api in
            let preflight = try await Self.preflight(api, lookup, origin: "https://ui.example", privateNetwork: true)
            #expect(preflight.status == .noContent && preflight.headers[Self.privateNetworkAllowed] == "true")
            #expect(try await Self.ownerLookup(api, origin: "https://ui.example").status == .ok)
            let codes = try await api.client.executeRequest(
                uri: "/emulator/v1/projects/demo-hearth/oobCodes", method: .get, headers: [.origin: "https://ui.example"], body: nil)
            #expect(codes.status == .ok)
        }
    }

    @Test("production: a path's project decides which origins may call it, not the API key beside it")
    func productionPathProject() async throws {
        try await APIHarness.run(configure: { configuration in
            RecentSignInTests.production(&configuration)
            configuration.projects.apiKeys["key-b"] = "project-b"
        }) { _, api in
            // localhost is demo-hearth's authorized domain by default; project-b has none set,
            // so its default (localhost) too: authorize a domain for demo-hearth only.
            let patched = try await api.send(
                .patch, "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config?updateMask=authorizedDomains",
                body: ByteBuffer(bytes: JSONValue.object(["authorizedDomains": ["app-a.example"]]).encoded()),
                headers: HeadfulSignInTests.productionAdmin)
            #expect(patched.status == 200)
            let ownPath = try await Self.preflight(
                api, "/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:lookup?key=key-b", origin: "https://app-a.example")
            #expect(ownPath.status == .noContent)
            let otherPath = try await Self.preflight(
                api, "/identitytoolkit.googleapis.com/v1/projects/project-b/accounts:lookup?key=test-key",
                origin: "https://app-a.example")
            #expect(otherPath.status == .forbidden)
        }
    }

    @Test("production: only origins on the project's authorized domains, refused with a 403 before any work")
    func production() async throws {
        try await APIHarness.run(configure: RecentSignInTests.production) { harness, api in
            let allowed = try await Self.preflight(api, Self.signUp, origin: "http://localhost:3000")
            #expect(allowed.status == .noContent && allowed.headers[.accessControlAllowOrigin] == "http://localhost:3000")

            let stranger = "https://evil.example"
            let preflight = try await Self.preflight(api, Self.signUp, origin: stranger)
            #expect(preflight.status == .forbidden && preflight.headers[.accessControlAllowOrigin] == nil)
            let before = try harness.services.accounts.accountCount(Caller(project: APIHarness.project, isAdmin: true))
            let post = try await Self.post(api, Self.signUp, origin: stranger, ["email": "x@example.com", "password": "cors-pass-1"])
            #expect(post.status == .forbidden)
            #expect(String(buffer: post.body).contains("UNAUTHORIZED_DOMAIN"))
            #expect(try harness.services.accounts.accountCount(Caller(project: APIHarness.project, isAdmin: true)) == before)
            // An unknown API key names no project, so no origin is authorized for it.
            let unknownKey = try await Self.preflight(
                api, "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=nope", origin: "http://localhost:3000")
            #expect(unknownKey.status == .forbidden)

            // The operator authorizes the app's domain: its origin (any port, any scheme) may call.
            let patched = try await api.send(
                .patch, "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config?updateMask=authorizedDomains",
                body: ByteBuffer(bytes: JSONValue.object(["authorizedDomains": ["localhost", "evil.example"]]).encoded()),
                headers: HeadfulSignInTests.productionAdmin)
            #expect(patched.status == 200)
            #expect(try await Self.preflight(api, Self.signUp, origin: stranger).status == .noContent)
            let admitted = try await Self.post(
                api, Self.signUp, origin: stranger + ":8443", ["email": "x@example.com", "password": "cors-pass-1"])
            #expect(admitted.status == .ok)
        }
    }
}
