import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthTesting
import HearthWire
import Testing

@Suite("profiles: production turns the development conveniences off")
struct ProfileTests {
    static let adminToken = "test-admin-token-7f3a9c1e5b2d8046"
    static func production(_ configuration: inout ServerSettings) {
        configuration.profile = .production
        configuration.projects.apiKeys = ["key-a": "project-a", "key-b": "project-b"]
        configuration.secrets.adminTokens = [AdminCredential(token: adminToken)]
    }

    @Test("registered API keys select their project; unknown keys, Bearer owner and /emulator are refused")
    func production() async throws {
        try await APIHarness.run(configure: Self.production) { _, api in
            let unknown = try await api.post(APIClient.v1 + "accounts:signUp?key=nope", [:])
            #expect(unknown.status == 400)
            #expect(unknown["error"]?["message"]?.stringValue?.hasPrefix("API key not valid") == true)
            let inA = try await api.post(APIClient.v1 + "accounts:signUp?key=key-a", [:])
            #expect(claims(inA.string("idToken"))["aud"] == "project-a")
            // A token of project A means nothing to project B.
            let crossed = try await api.post(APIClient.v1 + "accounts:lookup?key=key-b", ["idToken": inA["idToken"] ?? .null])
            #expect(crossed.errorCode == "INVALID_ID_TOKEN")

            let owner = try await api.post(
                APIClient.v1 + "projects/project-a/accounts:lookup", ["localId": ["x"]],
                headers: [.authorization: "Bearer owner", .contentType: "application/json"])
            #expect(owner.status == 401)
            let admin = try await api.post(
                APIClient.v1 + "projects/project-a/accounts:lookup",
                ["localId": [.string(inA.string("localId") ?? "")]],
                headers: [.authorization: "Bearer \(Self.adminToken)", .contentType: "application/json"])
            #expect(admin["users"]?.arrayValue?.count == 1)

            let wipe = try await api.send(.delete, "/emulator/v1/projects/project-a/accounts", body: nil, headers: [:])
            #expect(wipe.status == 404)
            let fake = try await api.post(
                APIClient.v1 + "accounts:signInWithIdp?key=key-a",
                ["requestUri": "http://localhost", "postBody": "providerId=github.com&id_token=%7B%22sub%22%3A%221%22%7D"])
            #expect(fake.errorCode == "INVALID_IDP_RESPONSE")
        }
    }

    @Test("production links point at the configured action handler; apps' emails need a relay")
    func productionLinks() async throws {
        let admin: HTTPFields = [.authorization: "Bearer \(Self.adminToken)", .contentType: "application/json"]
        let generate: JSONValue = ["requestType": "PASSWORD_RESET", "email": "links@example.com", "returnOobLink": true]
        try await APIHarness.run(configure: Self.production) { _, api in
            _ = try await api.post(APIClient.v1 + "accounts:signUp?key=key-a", ["email": "links@example.com", "password": "secret-1"])
            // Without actionUrl there is nowhere for a link to point: /emulator/action is off.
            let nowhere = try await api.post(APIClient.v1 + "projects/project-a/accounts:sendOobCode", generate, headers: admin)
            #expect(nowhere.errorCode == "CONFIGURATION_NOT_FOUND")
        }
        try await APIHarness.run(configure: {
            Self.production(&$0)
            $0.mail.actionUrl = "https://app.example.com/auth/action"
        }) { _, api in
            _ = try await api.post(APIClient.v1 + "accounts:signUp?key=key-a", ["email": "links@example.com", "password": "secret-1"])
            let generated = try await api.post(APIClient.v1 + "projects/project-a/accounts:sendOobCode", generate, headers: admin)
            let link = try #require(generated.string("oobLink"))
            #expect(link.hasPrefix("https://app.example.com/auth/action?mode=resetPassword&lang=en&oobCode="))
            #expect(link.hasSuffix("&apiKey=key-a"))
            // An app's request would be emailed, and no relay is configured: refused, nothing silently dropped.
            let emailed = try await api.post(
                APIClient.v1 + "accounts:sendOobCode?key=key-a", ["requestType": "PASSWORD_RESET", "email": "links@example.com"])
            #expect(emailed.errorCode == "CONFIGURATION_NOT_FOUND")
        }
    }

    @Test("development links follow actionUrl when it is set, keeping its own query")
    func developmentActionURL() async throws {
        try await APIHarness.run(configure: { $0.mail.actionUrl = "https://app.example.com/act?tenant=7" }) { _, api in
            _ = try await api.signUp(email: "dev@example.com")
            #expect(try await api.v1("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "dev@example.com"]).status == 200)
            let (_, link) = try await ActionCodeTests.delivered(api, to: "dev@example.com", "PASSWORD_RESET")
            #expect(link.hasPrefix("https://app.example.com/act?tenant=7&mode=resetPassword&"))
        }
    }

    @Test("the production profile will not start without API keys")
    func needsKeys() {
        var configuration = ServerSettings()
        configuration.profile = .production
        #expect(throws: ConfigurationError.productionNeedsAPIKeys) { try configuration.validated() }
    }

    @Test("configuration: file, then environment; unknown keys and bad values are errors")
    func loading() throws {
        let directory = TemporaryDirectory("config")
        let file = directory.path + "/hearth.json"
        try #"{"port": 9200, "project": "from-file", "signingAlgorithm": "es256"}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let loaded = try ServerConfiguration.load(file: file, environment: ["HEARTH_PROJECT": "from-env", "HEARTH_DATA_DIR": "/d"])
        #expect(loaded.listen.port == 9200)
        #expect(loaded.projects.defaultProject.rawValue == "from-env")
        #expect(loaded.dataDirectory == "/d")
        #expect(loaded.secrets.signingAlgorithm == .es256)
        try #"{"prot": 1}"#.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.unknownKey("prot", in: file)) { try ServerConfiguration.load(file: file, environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.load(file: nil, environment: ["HEARTH_PORT": "70000"]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.load(file: nil, environment: ["HEARTH_PROFILE": "prod"]) }
    }
}
