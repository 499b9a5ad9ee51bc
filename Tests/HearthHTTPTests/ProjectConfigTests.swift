import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import NIOCore
import Testing

/// Identity Platform's admin v2 project config, and the cleanup scheduler it switches on.
@Suite("project config (v2) and anonymous cleanup over HTTP")
struct ProjectConfigTests {
    static let path = "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config"

    static func get(_ api: APIClient, headers: HTTPFields = APIClient.admin) async throws -> Reply {
        try await api.send(.get, path, body: nil, headers: headers)
    }

    static func patch(_ api: APIClient, _ body: JSONValue, mask: String? = nil, headers: HTTPFields = APIClient.admin)
        async throws -> Reply
    {
        try await api.send(
            .patch, path + (mask.map { "?updateMask=" + $0 } ?? ""), body: ByteBuffer(bytes: body.encoded()), headers: headers)
    }

    static func configEvents(_ harness: APIHarness) throws -> [StoredEvent] {
        try harness.context.store.audit.events(of: .project(APIHarness.project))
    }

    @Test("GET shows Firebase's shape; PATCH with updateMask changes the named fields only, one event per real change")
    func getAndPatch() async throws {
        try await APIHarness.run { harness, api in
            let initial = try await Self.get(api)
            #expect(initial.status == 200)
            #expect(initial.string("name") == "projects/demo-hearth/config")
            #expect(initial["signIn"]?["allowDuplicateEmails"] == false)
            #expect(initial["signIn"]?["email"]?["enabled"] == true)
            #expect(initial["signIn"]?["email"]?["passwordRequired"] == false)
            #expect(initial["signIn"]?["anonymous"]?["enabled"] == true)
            #expect(initial["authorizedDomains"] == ["localhost"])
            #expect(initial["autodeleteAnonymousUsers"] == false)
            #expect(initial["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"] == false)

            let body: JSONValue = [
                "autodeleteAnonymousUsers": true, "authorizedDomains": ["localhost", "App.Example.com"],
                "signIn": ["allowDuplicateEmails": true],
            ]
            let patched = try await Self.patch(api, body, mask: "autodeleteAnonymousUsers,authorizedDomains")
            #expect(patched.status == 200)
            #expect(patched["autodeleteAnonymousUsers"] == true)
            #expect(patched["authorizedDomains"] == ["localhost", "app.example.com"])
            #expect(patched["signIn"]?["allowDuplicateEmails"] == false, "not in the mask")
            #expect(try await Self.get(api).json == patched.json)

            let events = try Self.configEvents(harness)
            #expect(events.count == 1)
            #expect(events.last?.metadata.actor == .admin)
            #expect(
                events.last?.payload
                    == .projectConfigChanged(
                        ProjectConfigChange(authorizedDomains: ["localhost", "app.example.com"], anonymousCleanup: true)))
            // The same again changes nothing, and records nothing.
            #expect(try await Self.patch(api, body, mask: "autodeleteAnonymousUsers,authorizedDomains").status == 200)
            #expect(try Self.configEvents(harness).count == 1)
            // A masked field the body leaves out takes its default (Google's field-mask rule).
            let cleared = try await Self.patch(api, [:], mask: "autodeleteAnonymousUsers")
            #expect(cleared["autodeleteAnonymousUsers"] == false)
        }
    }

    @Test("without a mask every field the body sets changes; a GET's answer sent back (with its output-only name) is accepted")
    func impliedMask() async throws {
        try await APIHarness.run { _, api in
            var config = try await Self.get(api).json.objectValue ?? [:]
            config["signIn"] = ["email": ["enabled": true, "passwordRequired": true], "anonymous": ["enabled": false]]
            config["emailPrivacyConfig"] = ["enableImprovedEmailPrivacy": true]
            let patched = try await Self.patch(api, .object(config))
            #expect(patched.status == 200)
            #expect(patched["signIn"]?["email"]?["passwordRequired"] == true)
            #expect(patched["signIn"]?["anonymous"]?["enabled"] == false)
            #expect(patched["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"] == true)
            // Anonymous sign-up is now refused, as the setting says.
            #expect(try await api.v1("signUp", ["returnSecureToken": true]).errorCode == "OPERATION_NOT_ALLOWED")
            // The emulator's own route sees the same settings.
            let emulator = try await api.send(.get, "/emulator/v1/projects/demo-hearth/config", body: nil, headers: APIClient.json)
            #expect(emulator["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"] == true)
        }
    }

    @Test("unknown, output-only and unsupported fields, wrong types, bad domains and non-admin callers are 400s")
    func refusals() async throws {
        try await APIHarness.run { harness, api in
            /// The 400's message code, or the status when it is not a 400.
            func code(_ body: JSONValue, mask: String? = nil, headers: HTTPFields = APIClient.admin) async throws -> String? {
                let reply = try await Self.patch(api, body, mask: mask, headers: headers)
                return reply.status == 400 ? reply.errorCode : "status \(reply.status)"
            }
            #expect(
                try await code([:], mask: "colour")
                    == "Invalid JSON payload received. Invalid update mask path: \"colour\" is not a field of Config.")
            let unknown = try await code(["colour": "blue"]) ?? ""
            #expect(unknown.hasPrefix("Invalid JSON payload received. Unknown name \"colour\""))
            #expect(try await code(["name": "x"], mask: "name") == "INVALID_CONFIG")
            #expect(try await code(["mfa": ["enabledProviders": ["PHONE_SMS"]]], mask: "mfa") == "INVALID_CONFIG")
            #expect(try await code(["mfa": ["state": "SOMETIMES"]])?.hasPrefix("Invalid JSON payload received. Invalid value") == true)
            let intervals: JSONValue = [
                "mfa": ["providerConfigs": [["state": "ENABLED", "totpProviderConfig": ["adjacentIntervals": 11]]]]
            ]
            #expect(try await code(intervals)?.hasPrefix("Invalid JSON payload received. Invalid value") == true)
            #expect(try await code(["multiTenant": ["allowTenants": true]]) == "INVALID_CONFIG")
            let wrongType = try await code(["autodeleteAnonymousUsers": "yes"]) ?? ""
            #expect(wrongType.hasPrefix("Invalid JSON payload received. Invalid value"))
            #expect(try await code(["authorizedDomains": ["https://app.example.com/"]]) == "INVALID_CONFIG")
            #expect(
                try await code(["anonymousCleanupAfterSeconds": "0"])
                    == "Invalid JSON payload received. Invalid value at 'config.anonymousCleanupAfterSeconds': expected whole seconds from 1 to 2592000 (30 days)."
            )
            #expect(try await code("not an object") != nil)
            let keyOnly: HTTPFields = [.contentType: "application/json"]
            #expect(try await code(["autodeleteAnonymousUsers": true], headers: keyOnly) == "INSUFFICIENT_PERMISSION")
            #expect(try await Self.get(api, headers: keyOnly).errorCode == "INSUFFICIENT_PERMISSION")
            #expect(try Self.configEvents(harness).isEmpty, "no refused change was recorded")
        }
    }

    @Test("cleanup on with a one-minute period: the scheduler purges the anonymous account; its tokens stop working at once")
    func purgeEndsSessions() async throws {
        try await APIHarness.run { harness, api in
            let anonymous = try await api.v1("signUp", ["returnSecureToken": true])
            let upgraded = try await api.v1("signUp", ["returnSecureToken": true])
            let idToken = try #require(anonymous.string("idToken"))
            let refreshToken = try #require(anonymous.string("refreshToken"))
            let patched = try await Self.patch(
                api, ["autodeleteAnonymousUsers": true, "anonymousCleanupAfterSeconds": "60"],
                mask: "autodeleteAnonymousUsers,anonymousCleanupAfterSeconds")
            #expect(patched["anonymousCleanupAfterSeconds"] == "60")
            let link = try await api.v1(
                "update", ["idToken": upgraded["idToken"] ?? .null, "email": "kept@example.com", "password": "correct-horse-42"])
            #expect(link.status == 200)
            harness.clock.advance(milliseconds: 60_000)
            let uid = try #require(anonymous.string("localId"))
            for _ in 0..<2000
            where try harness.services.accounts.account(UserID(uid)!, Caller(project: APIHarness.project, isAdmin: true)) != nil {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(try await api.lookup(idToken).errorCode == "USER_NOT_FOUND")
            #expect(try await api.refresh(refreshToken).status == 400)
            #expect(try harness.eventTypes(of: uid).last == "account.anonymous_purged")
            #expect(try harness.eventTypes(of: upgraded.string("localId")!).contains("account.anonymous_purged") == false)
        }
    }

    @Test("the config file's projects section records a project's settings at the first start; after that the ledger's win")
    func seedsFromTheConfigFile() async throws {
        let directory = TemporaryDirectory("seed")
        let declared: JSONValue = [
            "autodeleteAnonymousUsers": true, "authorizedDomains": ["app.example.com"], "anonymousCleanupAfterSeconds": "120",
            "defaultSupportedIdpConfigs": [
                "github.com": ["enabled": true, "clientId": "Iv1.file", "clientSecretFile": "/run/credentials/hearth.service/github"]
            ],
        ]
        let configure: (inout ServerSettings) -> Void = { configuration in
            configuration.dataDirectory = directory.path
            configuration.projects.declared = ["demo-hearth": declared]
        }
        try await APIHarness.run(configure: configure) { harness, api in
            let config = try await Self.get(api)
            #expect(config["autodeleteAnonymousUsers"] == true)
            #expect(config["authorizedDomains"] == ["app.example.com"])
            #expect(config["anonymousCleanupAfterSeconds"] == "120")
            let github = try await api.send(
                .get, "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/defaultSupportedIdpConfigs/github.com", body: nil,
                headers: APIClient.admin)
            #expect(github["enabled"] == true && github.string("clientSecretFile") == "/run/credentials/hearth.service/github")
            let events = try Self.configEvents(harness)
            #expect(events.map(\.type.name) == ["project.config_changed", "project.identity_provider_set"])
            #expect(events.allSatisfy { $0.metadata == Metadata(actor: .system, actorId: "config file") })
            #expect(try await Self.patch(api, ["autodeleteAnonymousUsers": false]).status == 200)
        }
        // The next start finds settings in the ledger: the operator's change stands.
        try await APIHarness.run(configure: configure) { harness, api in
            let config = try await Self.get(api)
            #expect(config["autodeleteAnonymousUsers"] == false)
            #expect(try Self.configEvents(harness).count == 3)
        }
        var invalid = ServerSettings()
        invalid.projects.declared = ["demo-hearth": ["autodeleteAnonymousUsers": "soon"]]
        #expect(throws: ConfigurationError.self) { try invalid.validated() }
        // A secret in the config file itself is refused: it goes in a file of its own.
        invalid.projects.declared = ["demo-hearth": ["defaultSupportedIdpConfigs": ["github.com": ["clientId": "x", "clientSecret": "s"]]]]
        #expect(throws: ConfigurationError.self) { try invalid.validated() }
    }

    @Test("cleanup preview counts what turning it on would schedule and when; status shows schedule, due and purges by day")
    func previewAndStatus() async throws {
        try await APIHarness.run { harness, api in
            let cleanup = "/hearth/v1/projects/demo-hearth/cleanup"
            for _ in 0..<3 { #expect(try await api.v1("signUp", ["returnSecureToken": true]).status == 200) }
            func day(_ time: Int64) -> String { String(Timestamp.iso8601(milliseconds: time).prefix(10)) }
            let start = harness.clock.now()
            let preview = try await api.send(.get, cleanup + "/preview", body: nil, headers: APIClient.admin)
            #expect(preview["enabled"] == false && preview["wouldSchedule"] == 3 && preview["alreadyScheduled"] == 0)
            #expect(preview["dueByDay"] == [["day": .string(day(start + 30 * 86_400_000)), "accounts": 3]])
            #expect(try await Self.patch(api, ["autodeleteAnonymousUsers": true]).status == 200)
            let on = try await api.send(.get, cleanup, body: nil, headers: APIClient.admin)
            #expect(on["enabled"] == true && on["scheduled"] == 3 && on["dueNow"] == 0 && on["purgedLast30Days"] == 0)
            #expect(on.string("nextDueAt") == Timestamp.iso8601(milliseconds: start + 30 * 86_400_000))
            harness.clock.advance(days: 30)
            for _ in 0..<2000 {
                if try await api.send(.get, cleanup, body: nil, headers: APIClient.admin)["scheduled"] == 0 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            let after = try await api.send(.get, cleanup, body: nil, headers: APIClient.admin)
            #expect(after["scheduled"] == 0 && after["purgedLast30Days"] == 3 && after["nextDueAt"] == nil)
            #expect(after["purgedByDay"] == [["day": .string(day(harness.clock.now())), "accounts": 3]])
            let keyOnly: HTTPFields = [.contentType: "application/json"]
            #expect(try await api.send(.get, cleanup, body: nil, headers: keyOnly).errorCode == "INSUFFICIENT_PERMISSION")
        }
    }
}
