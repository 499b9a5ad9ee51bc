import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import NIOCore
import Testing

/// Identity Platform's provider configurations (v2), and the rule that a client secret never
/// reaches the ledger, the audit output or a response in plaintext.
@Suite("identity provider configurations (v2)")
struct IdentityProviderConfigTests {
    static let v2 = "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/"

    static func call(
        _ api: APIClient, _ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil,
        headers: HTTPFields = APIClient.admin
    ) async throws -> Reply {
        try await api.send(method, v2 + path, body: body.map { ByteBuffer(bytes: $0.encoded()) }, headers: headers)
    }

    @Test("GitHub: create, get, list, patch with updateMask, delete; the secret sealed, only its fingerprint shown")
    func gitHubLifecycle() async throws {
        try await APIHarness.run { harness, api in
            let secret = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
            let created = try await Self.call(
                api, .post, "defaultSupportedIdpConfigs?idpId=github.com",
                ["enabled": true, "clientId": "Iv1.hearth", "clientSecret": .string(secret)])
            #expect(created.status == 200)
            #expect(created.string("name") == "projects/demo-hearth/defaultSupportedIdpConfigs/github.com")
            #expect(created["enabled"] == true && created.string("clientId") == "Iv1.hearth")
            #expect(created["clientSecret"] == nil)
            #expect(created.string("clientSecretFingerprint") == (try harness.context.secrets.fingerprint(secret)))
            // Keyed: not the secret's plain SHA-256 (its first 8 bytes here), which anyone reading it
            // could test guesses against.
            #expect(created.string("clientSecretFingerprint")?.count == 16)
            #expect(created.string("clientSecretFingerprint") != "2389450b46317723")

            #expect(try await Self.call(api, .get, "defaultSupportedIdpConfigs/github.com").json == created.json)
            let listed = try await Self.call(api, .get, "defaultSupportedIdpConfigs")
            #expect(listed["defaultSupportedIdpConfigs"]?.arrayValue?.count == 1)
            #expect(try await Self.call(api, .get, "oauthIdpConfigs")["oauthIdpConfigs"] == [])

            let disabled = try await Self.call(
                api, .patch, "defaultSupportedIdpConfigs/github.com?updateMask=enabled", ["enabled": false, "clientId": "ignored"])
            #expect(disabled["enabled"] == false && disabled.string("clientId") == "Iv1.hearth")
            #expect(
                try await Self.call(api, .post, "defaultSupportedIdpConfigs?idpId=github.com", ["clientId": "x"]).errorCode
                    == "CONFIGURATION_EXISTS")

            // The secret opens again from what the ledger holds.
            let stored = try harness.services.projects.identityProvider(.github, Caller(project: APIHarness.project, isAdmin: true))
            #expect(try harness.context.secrets.open(try #require(stored.clientSecret)) == secret)
            // Nowhere in plaintext: not in the audit output, not in the LMDB file.
            var lines: [String] = []
            try harness.context.store.audit.replay(StoreAudit.Filter(project: APIHarness.project)) { lines.append(try $0.jsonLine()) }
            #expect(lines.contains { $0.contains("project.identity_provider_set") })
            #expect(!lines.contains { $0.contains(secret) })
            let file = try Data(contentsOf: URL(fileURLWithPath: harness.directory.path + "/data.mdb"))
            #expect(file.range(of: Data(secret.utf8)) == nil)

            #expect(try await Self.call(api, .delete, "defaultSupportedIdpConfigs/github.com").json == [:])
            #expect(try await Self.call(api, .get, "defaultSupportedIdpConfigs/github.com").errorCode == "CONFIGURATION_NOT_FOUND")
            #expect(try await Self.call(api, .delete, "defaultSupportedIdpConfigs/github.com").errorCode == "CONFIGURATION_NOT_FOUND")
            let types = try harness.context.store.audit.events(of: .project(APIHarness.project)).map(\.type.name)
            #expect(types == ["project.identity_provider_set", "project.identity_provider_set", "project.identity_provider_deleted"])
        }
    }

    @Test("OpenID Connect: issuer, response type and the refusals the Admin SDK meets")
    func openIDConnect() async throws {
        try await APIHarness.run { _, api in
            let created = try await Self.call(
                api, .post, "oauthIdpConfigs?oauthIdpConfigId=oidc.corp",
                ["clientId": "corp-app", "issuer": "https://id.corp.example", "displayName": "Corp", "enabled": true])
            #expect(created.status == 200)
            #expect(created["responseType"] == ["idToken": true, "code": false])
            #expect(created.string("issuer") == "https://id.corp.example")
            // The code flow needs the secret.
            let codeFlow = try await Self.call(
                api, .patch, "oauthIdpConfigs/oidc.corp?updateMask=responseType", ["responseType": ["code": true]])
            #expect(codeFlow.errorCode == "INVALID_CONFIG")
            let withSecret = try await Self.call(
                api, .patch, "oauthIdpConfigs/oidc.corp?updateMask=responseType,clientSecret",
                ["responseType": ["code": true], "clientSecret": "corp-secret"])
            #expect(withSecret["responseType"] == ["idToken": false, "code": true])

            func code(_ reply: Reply) -> String? { reply.status == 400 ? reply.errorCode : "status \(reply.status)" }
            let badId = try await Self.call(
                api, .post, "oauthIdpConfigs?oauthIdpConfigId=corp", ["clientId": "x", "issuer": "https://x.example"])
            #expect(code(badId) == "INVALID_PROVIDER_ID")
            let notBuiltIn = try await Self.call(api, .post, "defaultSupportedIdpConfigs?idpId=oidc.corp", ["clientId": "x"])
            #expect(code(notBuiltIn) == "INVALID_PROVIDER_ID")
            let noIssuer = try await Self.call(api, .post, "oauthIdpConfigs?oauthIdpConfigId=oidc.other", ["clientId": "x"])
            #expect(code(noIssuer) == "INVALID_CONFIG")
            let noClient = try await Self.call(api, .post, "defaultSupportedIdpConfigs?idpId=yahoo.com", [:])
            #expect(code(noClient) == "INVALID_CONFIG")
            let unknown = try await Self.call(
                api, .post, "defaultSupportedIdpConfigs?idpId=yahoo.com", ["clientId": "y", "colour": "blue"])
            #expect(code(unknown) == "Invalid JSON payload received. Unknown name \"colour\" at 'config': Cannot find field.")
            // Through the API a secret file must lie in the directory the operator named (none here).
            let outside = try await Self.call(
                api, .post, "defaultSupportedIdpConfigs?idpId=yahoo.com", ["clientId": "y", "clientSecretFile": "/etc/shadow"])
            #expect(code(outside) == "INVALID_CONFIG")
            // Pointed at another issuer, the provider loses its secret unless it is given again.
            let moved = try await Self.call(
                api, .patch, "oauthIdpConfigs/oidc.corp?updateMask=issuer", ["issuer": "https://elsewhere.example"])
            #expect(code(moved) == "INVALID_CONFIG", "enabled with the code flow, it now lacks its secret")
            let plainIssuer = try await Self.call(
                api, .post, "oauthIdpConfigs?oauthIdpConfigId=oidc.plain", ["clientId": "p", "issuer": "http://id.example"])
            #expect(code(plainIssuer) == "INVALID_CONFIG")
            let keyOnly: HTTPFields = [.contentType: "application/json"]
            let notAdmin = try await Self.call(api, .get, "oauthIdpConfigs", headers: keyOnly)
            #expect(code(notAdmin) == "INSUFFICIENT_PERMISSION")
        }
    }
}
