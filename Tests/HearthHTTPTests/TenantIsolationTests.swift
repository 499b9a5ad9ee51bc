import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthStore
import HearthTesting
import HearthWire
import Logging
import NIOCore
import Synchronization
import Testing

@testable import HearthApp

/// One daemon, two tenants (issue 28): a project's own admin token administers its project and
/// nothing else; it never gets the daemon to read, or send anywhere, a secret the operator keeps.
@Suite("tenant isolation: what a project's admin can not reach")
struct TenantIsolationTests {
    static let tenantToken = "tenant-a-admin-token-5f2d9c8e1b7a4"
    static let operatorToken = "operator-admin-token-0c4e8a2f6d1b9"
    static let v2 = "/identitytoolkit.googleapis.com/v2/projects/"

    /// Production, two projects, the credentials directory docs/security.md describes: the operator's admin token,
    /// the SMTP password, each project's provider secrets and the other tenant's admin token.
    static func configure(_ secrets: TemporaryDirectory) -> (inout ServerSettings) -> Void {
        { configuration in
            configuration.profile = .production
            configuration.projects.apiKeys = ["key-a": "project-a", "key-b": "project-b"]
            configuration.secrets.adminTokens = [
                AdminCredential(token: tenantToken, scope: .projects([ProjectID("project-a")!]), name: "tenant-a"),
                AdminCredential(token: operatorToken),
            ]
            configuration.providers.secretFilesDirectory = secrets.path
        }
    }

    static let secretFiles = ["admin-token", "smtp-password", "github", "yahoo", "project-b-github", "admin-token-b"]

    static func call(
        _ api: APIClient, _ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil, token: String
    ) async throws -> Reply {
        try await api.send(
            method, v2 + path, body: body.map { ByteBuffer(bytes: $0.encoded()) },
            headers: [.authorization: "Bearer \(token)", .contentType: "application/json"])
    }

    @Test("a project's admin can not point a provider at any secret file; the operator can, inside the directory")
    func secretFilesAreTheOperators() async throws {
        let secrets = TemporaryDirectory("credentials")
        for name in Self.secretFiles {
            try "secret-held-in-\(name)\n".write(toFile: secrets.path + "/" + name, atomically: true, encoding: .utf8)
        }
        try await APIHarness.run(configure: Self.configure(secrets)) { harness, api in
            for name in Self.secretFiles {
                let file = secrets.path + "/" + name
                let attempts: [(HTTPRequest.Method, String, JSONValue)] = [
                    (
                        .post, "project-a/oauthIdpConfigs?oauthIdpConfigId=oidc.mine",
                        [
                            "clientId": "c", "issuer": "https://id.tenant.example", "responseType": ["code": true],
                            "clientSecretFile": .string(file),
                        ]
                    ),
                    (.post, "project-a/defaultSupportedIdpConfigs?idpId=github.com", ["clientId": "c", "clientSecretFile": .string(file)]),
                ]
                for (method, path, body) in attempts {
                    let reply = try await Self.call(api, method, path, body, token: Self.tenantToken)
                    #expect(reply.status == 403, "\(name) via \(path)")
                    #expect(reply.errorCode == "PERMISSION_DENIED", "\(name)")
                }
            }
            // Nor by changing a provider that exists: the file rides on no update.
            let created = try await Self.call(
                api, .post, "project-a/defaultSupportedIdpConfigs?idpId=github.com", ["clientId": "c", "clientSecret": "own"],
                token: Self.tenantToken)
            #expect(created.status == 200)
            let patched = try await Self.call(
                api, .patch, "project-a/defaultSupportedIdpConfigs/github.com?updateMask=clientSecretFile",
                ["clientSecretFile": .string(secrets.path + "/admin-token")], token: Self.tenantToken)
            #expect(patched.status == 403)
            let stored = try harness.services.projects.identityProvider(.github, Caller(project: ProjectID("project-a")!, isAdmin: true))
            #expect(stored.clientSecret.map { try? harness.context.secrets.open($0) } == "own")

            // The operator's token: inside the directory, yes; outside it, no.
            let byOperator = try await Self.call(
                api, .patch, "project-a/defaultSupportedIdpConfigs/github.com?updateMask=clientSecretFile",
                ["clientSecretFile": .string(secrets.path + "/github")], token: Self.operatorToken)
            #expect(byOperator.string("clientSecretFile") == secrets.path + "/github")
            let outside = try await Self.call(
                api, .patch, "project-a/defaultSupportedIdpConfigs/github.com?updateMask=clientSecretFile",
                ["clientSecretFile": "/etc/passwd"], token: Self.operatorToken)
            #expect(outside.errorCode == "INVALID_CONFIG")
            let escaping = try await Self.call(
                api, .patch, "project-a/defaultSupportedIdpConfigs/github.com?updateMask=clientSecretFile",
                ["clientSecretFile": .string(secrets.path + "/../credentials-elsewhere/x")], token: Self.operatorToken)
            #expect(escaping.errorCode == "INVALID_CONFIG")
            // And the tenant, on the provider the operator gave a file: moved elsewhere, it loses it.
            let moved = try await Self.call(
                api, .patch, "project-a/defaultSupportedIdpConfigs/github.com?updateMask=clientId", ["clientId": "other"],
                token: Self.tenantToken)
            #expect(moved.status == 200)
            #expect(moved["clientSecretFile"] == nil && moved["clientSecretFingerprint"] == nil)
        }
    }

    @Test("a project may not take this server's own host as a link domain")
    func serverHostIsNoLinkDomain() async throws {
        let secrets = TemporaryDirectory("credentials")
        try await APIHarness.run(configure: { configuration in
            Self.configure(secrets)(&configuration)
            configuration.listen.publicUrl = "https://Auth.Example.com"
        }) { _, api in
            let reply = try await api.send(
                .patch, Self.v2 + "project-a/config?updateMask=linkDomains",
                body: ByteBuffer(bytes: JSONValue.object(["linkDomains": ["auth.example.com"]]).encoded()),
                headers: [.authorization: "Bearer \(Self.tenantToken)", .contentType: "application/json"])
            #expect(reply.errorCode == "INVALID_CONFIG", "\(reply.json)")
        }
    }

    @Test("events record which admin credential acted: its name, or a prefix of its hash")
    func adminActorsAreNamed() async throws {
        let secrets = TemporaryDirectory("credentials")
        try await APIHarness.run(configure: Self.configure(secrets)) { harness, api in
            let config = Self.v2 + "project-a/config?updateMask=authorizedDomains"
            for token in [Self.tenantToken, Self.operatorToken] {
                let reply = try await api.send(
                    .patch, config,
                    body: ByteBuffer(bytes: JSONValue.object(["authorizedDomains": [.string("\(token.prefix(6)).example")]]).encoded()),
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/json"])
                #expect(reply.status == 200)
            }
            let actors = try harness.context.store.audit.events(of: .project(ProjectID("project-a")!)).map(\.metadata)
                .filter { $0.actor == .admin }.map(\.actorId)
            let operatorName = AdminCredential(token: Self.operatorToken).recordedName
            #expect(actors == ["tenant-a", operatorName])
            #expect(operatorName.hasPrefix("token-") && operatorName.count == "token-".count + 8)
            #expect(!operatorName.contains(Self.operatorToken.prefix(8)))
        }
    }

    @Test("at start, a secret file an admin other than the operator named (before this rule) is logged, one the operator named is not")
    func plantedSecretFilesAreReported() async throws {
        let secrets = TemporaryDirectory("credentials")
        try await APIHarness.run(configure: Self.configure(secrets)) { harness, api in
            let store = harness.context.store
            let projectA = ProjectID("project-a")!
            // As a ledger from before issue 28 holds it: every admin recorded as `owner`.
            let planted = IdentityProviderConfig(
                providerId: .github, enabled: true, clientId: "c", clientSecret: .file(path: secrets.path + "/admin-token"))
            _ = try await store.execute(
                .setIdentityProvider(projectA, planted, creating: true), metadata: Metadata(actor: .admin, actorId: "owner"))
            let byOperator = IdentityProviderConfig(
                providerId: .yahoo, enabled: true, clientId: "y", clientSecret: .file(path: secrets.path + "/yahoo"))
            let operatorName = AdminCredential(token: Self.operatorToken).recordedName
            _ = try await store.execute(
                .setIdentityProvider(projectA, byOperator, creating: true), metadata: Metadata(actor: .admin, actorId: operatorName))
            let lines = RecordedLines()
            let logger = Logger(label: "audit") { _ in lines }
            try SecretFileAudit.check(store, declared: [], operators: [operatorName], logger: logger)
            #expect(lines.all.count == 1)
            #expect(lines.all.first?.contains("github.com") == true && lines.all.first?.contains("admin:owner") == true)
            _ = api
        }
    }
}

/// A log handler that keeps each line's message and metadata.
final class RecordedLines: LogHandler, Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var metadata: Logger.Metadata {
        get { [:] }
        set {}  // swift-format-ignore: a recorder has no metadata of its own
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }
    func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        lines.withLock { $0.append("\(event.message) \(fields)") }
    }
}
