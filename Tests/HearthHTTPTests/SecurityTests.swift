import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthTesting
import HearthWire
import HummingbirdTesting
import Testing

/// The holes an attacker's probe found (issue 15), each pinned: they fail on the code before it.
@Suite("security: what a client, an attacker or an operator's mistake can not do")
struct SecurityTests {
    static let redacted: JSONValue = "UkVEQUNURUQ="

    @Test("users see a redacted password hash; only admin exports (batchGet, admin lookup, query) carry hash and salt")
    func passwordHashRedaction() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "hash@example.com")
            let uid = try #require(user.string("localId"))

            let own = try #require(try await api.lookup(user.string("idToken") ?? "")["users"]?.arrayValue?.first)
            #expect(own["passwordHash"] == Self.redacted)  // non-empty: the SDKs still see a password
            #expect(own["salt"] == nil)
            let v1 = try #require(try await api.v1("lookup", ["idToken": user["idToken"] ?? .null])["users"]?.arrayValue?.first)
            #expect(v1["passwordHash"] == Self.redacted)
            #expect(v1["salt"] == nil)
            let updated = try await api.v1("update", ["idToken": user["idToken"] ?? .null, "displayName": "Ada"])
            #expect(updated.status == 200)
            #expect(updated["passwordHash"] == Self.redacted)
            #expect(updated["salt"] == nil)
            let adminUpdated = try await api.admin("accounts:update", ["localId": .string(uid), "displayName": "Ada L"])
            #expect(adminUpdated["passwordHash"] == Self.redacted)
            // An admin presenting a user's ID token gets that user's view, not an export.
            let viaToken = try await api.post(
                APIClient.v1 + "accounts:lookup", ["idToken": user["idToken"] ?? .null], headers: APIClient.admin)
            #expect(viaToken["users"]?.arrayValue?.first?["passwordHash"] == Self.redacted)

            // The exports: the real hash and salt, base64.
            let exported = try #require(try await api.admin("accounts:lookup", ["localId": [.string(uid)]])["users"]?.arrayValue?.first)
            let hash = try #require(exported["passwordHash"]?.stringValue)
            #expect(hash != Self.redacted.stringValue && Data(base64Encoded: hash)?.count == 32)
            #expect(exported["salt"]?.stringValue.flatMap { Data(base64Encoded: $0) }?.isEmpty == false)
            let page = try await api.send(
                .get, APIClient.v1 + "projects/demo-hearth/accounts:batchGet", body: nil, headers: APIClient.admin)
            #expect(page["users"]?.arrayValue?.first?["passwordHash"]?.stringValue == hash)
            let queried = try await api.admin("accounts:query", [:])
            #expect(queried["userInfo"]?.arrayValue?.first?["passwordHash"]?.stringValue == hash)
        }
    }

    @Test("createSessionCookie needs admin credentials on every path; an API key is not enough")
    func sessionCookieNeedsAdmin() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "cookie@example.com")
            let body: JSONValue = ["idToken": user["idToken"] ?? .null, "validDuration": "1209600"]
            let keyOnly = try await api.v1("createSessionCookie", body)
            #expect(keyOnly.errorCode == "INSUFFICIENT_PERMISSION")
            #expect(keyOnly["sessionCookie"] == nil)
            let projectPath = try await api.post(APIClient.v1 + "projects/demo-hearth:createSessionCookie?key=k", body)
            #expect(projectPath.status == 400 && projectPath["sessionCookie"] == nil)
            let admin = try await api.post(APIClient.v1 + "accounts:createSessionCookie", body, headers: APIClient.admin)
            #expect(admin["sessionCookie"]?.stringValue?.isEmpty == false)
        }
    }

    @Test("continue URLs are absolute http or https everywhere: sendOobCode (app and admin), createAuthUri, the action page")
    func continueURLSchemes() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.signUp(email: "cont@example.com")
            for bad in ["javascript:alert(1)", "JavaScript://localhost/%0Aalert(1)", "data:text/html,<script>x</script>", "/relative"] {
                let app = try await api.v1(
                    "sendOobCode", ["requestType": "PASSWORD_RESET", "email": "cont@example.com", "continueUrl": .string(bad)])
                #expect(app.errorCode == "INVALID_CONTINUE_URI", "\(bad)")
                let admin = try await api.admin(
                    "accounts:sendOobCode",
                    ["requestType": "PASSWORD_RESET", "email": "cont@example.com", "continueUrl": .string(bad), "returnOobLink": true])
                #expect(admin.errorCode == "INVALID_CONTINUE_URI", "\(bad)")
                let uri = try await api.v1("createAuthUri", ["identifier": "cont@example.com", "continueUri": .string(bad)])
                #expect(uri.errorCode == "INVALID_CONTINUE_URI", "\(bad)")
            }
            #expect(
                try await api.v1("createAuthUri", ["identifier": "cont@example.com", "continueUri": "http://www.google.com/"]).status == 200
            )

            // A link whose continueUrl was edited to javascript: is not followed, and its code is not spent.
            let user = try await api.v1("signInWithPassword", ["email": "cont@example.com", "password": "correct-horse-42"])
            #expect(try await api.v1("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": user["idToken"] ?? .null]).status == 200)
            let (code, _) = try await ActionCodeTests.delivered(api, to: "cont@example.com", "VERIFY_EMAIL")
            for mode in ["signIn", "verifyEmail"] {
                let page = try await api.client.executeRequest(
                    uri: "/emulator/action?mode=\(mode)&oobCode=\(code)&apiKey=k&continueUrl=javascript:alert(1)", method: .get,
                    headers: [:], body: nil)
                #expect(page.status == .badRequest, "\(mode)")
                #expect(page.headers[.location] == nil)
            }
            // The development IdP page sends the browser to the app's scheme: never a scheme a browser runs.
            for app in ["ibi=b&clientId=javascript", "ibi=b&clientId=alert(1).javascript:", "ibi=javascript", "apn=a;S.x=1"] {
                let handler = try await api.client.executeRequest(
                    uri: "/emulator/auth/handler?providerId=github.com&apiKey=k&finish=1&sub=1&\(app)", method: .get,
                    headers: [:], body: nil)
                #expect(handler.status == .badRequest, "\(app)")
                #expect(handler.headers[.location] == nil)
            }
            let applied = try await api.client.executeRequest(
                uri: "/emulator/action?mode=verifyEmail&oobCode=\(code)&apiKey=k&continueUrl=https://app.example.com/done",
                method: .get, headers: [:], body: nil)
            #expect(applied.status == .seeOther)
            #expect(applied.headers[.location] == "https://app.example.com/done")
        }
    }

    @Test("the JWKS tells verifiers how long to cache it")
    func keySetCaching() async throws {
        try await APIHarness.run { _, api in
            let response = try await api.client.executeRequest(uri: "/.well-known/jwks.json", method: .get, headers: [:], body: nil)
            #expect(response.status == .ok)
            let cacheControl = try #require(response.headers[.cacheControl])
            #expect(cacheControl.hasPrefix("public, max-age="))
            let maxAge = cacheControl.split(separator: ",")[1].split(separator: "=")[1]
            #expect(Int(maxAge).map { $0 > 0 && $0 <= 3600 } == true)
        }
    }

    static let tokenA = "admin-of-project-a-only-3f9c2e71b8d4"
    static let tokenEverywhere = "admin-of-every-project-6a1d9e4c0b72"

    @Test("an admin token scoped to projects administers those, and is refused elsewhere with 403")
    func scopedAdminTokens() async throws {
        try await APIHarness.run(configure: { configuration in
            configuration.profile = .production
            configuration.projects.apiKeys = ["key-a": "project-a", "key-b": "project-b"]
            configuration.secrets.adminTokens = [
                AdminCredential(token: Self.tokenA, scope: .projects([ProjectID("project-a")!])),
                AdminCredential(token: Self.tokenEverywhere),
            ]
        }) { _, api in
            func create(_ project: String, _ token: String) async throws -> Reply {
                try await api.post(
                    APIClient.v1 + "projects/\(project)/accounts", [:],
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/json"])
            }
            #expect(try await create("project-a", Self.tokenA).string("localId") != nil)
            let elsewhere = try await create("project-b", Self.tokenA)
            #expect(elsewhere.status == 403)
            #expect(elsewhere["error"]?["status"] == "PERMISSION_DENIED")
            #expect(try await create("project-b", Self.tokenEverywhere).string("localId") != nil)
            // A call that names no project acts on the token's only one.
            let unnamed = try await api.post(
                APIClient.v1 + "accounts:signUp", ["localId": "made-by-a"],
                headers: [.authorization: "Bearer \(Self.tokenA)", .contentType: "application/json"])
            #expect(unnamed.string("localId") == "made-by-a")
            let seen = try await api.post(
                APIClient.v1 + "projects/project-a/accounts:lookup", ["localId": ["made-by-a"]],
                headers: [.authorization: "Bearer \(Self.tokenEverywhere)", .contentType: "application/json"])
            #expect(seen["users"]?.arrayValue?.count == 1)
            // Through another project's API key: still that project, still refused.
            let keyed = try await api.post(
                APIClient.v1 + "accounts:lookup?key=key-b", ["localId": ["made-by-a"]],
                headers: [.authorization: "Bearer \(Self.tokenA)", .contentType: "application/json"])
            #expect(keyed.status == 403)
        }
    }

    @Test("admin tokens: published defaults, short or patterned tokens are refused at start; scoped entries load from JSON and files")
    func adminTokenRules() throws {
        func validate(_ token: String) throws {
            var configuration = ServerSettings()
            configuration.profile = .production
            configuration.projects.apiKeys = ["k": "p"]
            configuration.secrets.adminTokens = [AdminCredential(token: token)]
            _ = try configuration.validated()
        }
        for weak in [
            "owner", "Owner", "x", "short-but-not-32-characters", String(repeating: "ab", count: 20),
            "replace-with-a-long-random-token-from-openssl-rand", "with some spaces in it, 32 chars or more",
        ] {
            #expect(throws: ConfigurationError.self, "\(weak)") { try validate(weak) }
        }
        try validate("J8v2Qk4m7Xz1Lp0sRt6Yw9Nc3Hb5Gd8F")  // 32 random characters
        let message = ConfigurationError.weakAdminToken("shorter than 32 characters").description
        #expect(message.contains("at least 32"))

        let directory = TemporaryDirectory("tokens")
        let tokenFile = directory.path + "/admin-b"
        try "\(Self.tokenEverywhere)\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let file = directory.path + "/hearth.json"
        try """
        {"profile": "production", "apiKeys": {"k": "project-a"}, "adminTokens": [
          "\(Self.tokenA)x",
          {"token": "\(Self.tokenA)", "projects": ["project-a"]},
          {"tokenFile": "\(tokenFile)", "projects": ["project-b", "project-c"]}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let loaded = try ServerConfiguration.load(file: file, environment: [:])
        #expect(
            loaded.secrets.adminCredentials == [
                AdminCredential(token: Self.tokenA + "x"),
                AdminCredential(token: Self.tokenA, scope: .projects([ProjectID("project-a")!])),
                AdminCredential(token: Self.tokenEverywhere, scope: .projects([ProjectID("project-b")!, ProjectID("project-c")!])),
            ])
        try #"{"adminTokens": [{"token": "J8v2Qk4m7Xz1Lp0sRt6Yw9Nc3Hb5Gd8F", "projects": []}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.load(file: file, environment: [:]) }
        try #"{"adminTokens": ["owner"]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.load(file: file, environment: [:]) }
    }

    @Test("development, and production's plain HTTP, listen on loopback only, unless an insecure option says otherwise")
    func developmentStaysOnLoopback() throws {
        for host in ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"] {
            #expect(throws: Never.self, "\(host)") {
                try ServerConfiguration.load(file: nil, environment: ["HEARTH_HOST": host])
            }
        }
        for host in ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.com", "my-laptop", "::ffff:10.0.0.1"] {
            #expect(throws: ConfigurationError.developmentOffLoopback(host), "\(host)") {
                try ServerConfiguration.load(file: nil, environment: ["HEARTH_HOST": host])
            }
            let allowed = try ServerConfiguration.load(file: nil, environment: ["HEARTH_HOST": host]) {
                $0.listen.insecureDevelopmentOnNetwork = true
            }
            #expect(allowed.listen.host == host && allowed.listen.servesDevelopmentOffLoopback)
            let production: [String: String] = ["HEARTH_HOST": host, "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": #"{"k":"p"}"#]
            // Production off loopback is plain HTTP on the network: refused unless the option names the risk.
            #expect(throws: ConfigurationError.plainHTTPOffLoopback(host), "\(host)") {
                try ServerConfiguration.load(file: nil, environment: production)
            }
            let named = try ServerConfiguration.load(
                file: nil, environment: production.merging(["HEARTH_INSECURE_PLAIN_HTTP_ON_NETWORK": "true"]) { $1 })
            #expect(named.listen.host == host && named.listen.servesPlainHTTPOffLoopback)
        }
        for host in ["127.0.0.1", "::1"] {
            #expect(throws: Never.self) {
                try ServerConfiguration.load(
                    file: nil, environment: ["HEARTH_HOST": host, "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": #"{"k":"p"}"#])
            }
        }
        let viaEnvironment = try ServerConfiguration.load(
            file: nil, environment: ["HEARTH_HOST": "0.0.0.0", "HEARTH_INSECURE_DEVELOPMENT_ON_NETWORK": "true"])
        #expect(viaEnvironment.listen.servesDevelopmentOffLoopback)
    }

    @Test("the connection cap leaves a reserve of descriptors; a configured cap is lowered to fit")
    func connectionCap() {
        #expect(ConnectionLimit.cap(configured: nil, descriptorLimit: 256, openNow: 30) == (256 - 30 - ConnectionLimit.reserve, false))
        #expect(ConnectionLimit.cap(configured: 100, descriptorLimit: 256, openNow: 30) == (100, false))
        #expect(ConnectionLimit.cap(configured: 10_000, descriptorLimit: 256, openNow: 30) == (256 - 30 - ConnectionLimit.reserve, true))
        #expect(ConnectionLimit.cap(configured: nil, descriptorLimit: 70, openNow: 30).cap == 1)
        // The soft limit is raised to the hard one.
        let limit = ConnectionLimit.raiseDescriptorLimit()
        #expect(limit >= 256)
        #expect(ConnectionLimit.openDescriptors() > 2)
    }
}
