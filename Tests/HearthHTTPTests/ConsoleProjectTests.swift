import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

/// The console's project page through the router: the settings saved through the v2 config
/// path (only what changed, recorded as the console's admin), providers never showing a secret,
/// and the settings history.
@Suite("console project page")
struct ConsoleProjectTests {
    /// The settings form's fields as the page fills them in (a browser's submission), with
    /// `changes` over them ("off" unticks a box).
    static func form(_ html: String, _ changes: [String: String]) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        for box in html.components(separatedBy: "<input type=\"checkbox\" name=\"").dropFirst() {
            let name = String(box.prefix { $0 != "\"" })
            let checked = box.prefix { $0 != ">" }.hasSuffix(" checked")
            if (changes[name].map { $0 == "on" }) ?? checked { fields.append((name, "on")) }
        }
        for area in html.components(separatedBy: "<textarea name=\"").dropFirst() {
            let name = String(area.prefix { $0 != "\"" })
            let text = String(area.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" }).replacingOccurrences(of: "&quot;", with: "\"")
            fields.append((name, changes[name] ?? text))
        }
        return fields
    }

    @Test("settings saved through the v2 path, only what changed; refusals shown; providers by fingerprint; the history")
    func settings() async throws {
        try await APIHarness.run { harness, api in
            let secret = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
            let provider = try await IdentityProviderConfigTests.call(
                api, .post, "defaultSupportedIdpConfigs?idpId=github.com",
                ["enabled": true, "clientId": "Iv1.hearth", "clientSecret": .string(secret)])
            #expect(provider.status == 200)
            let session = try await ConsoleChangeTests.session(api)
            let page = try await session.get(api, "/console/project")
            #expect(page.status == 200 && page.html.contains("Iv1.hearth"))
            #expect(page.html.contains("fingerprint \(try harness.context.secrets.fingerprint(secret))"))
            #expect(!page.html.contains(secret))

            let unchanged = try await session.post(api, "/console/project", Self.form(page.html, [:]))
            #expect(unchanged.status == 303 && unchanged.headers[.location] == "/console/project?done=unchanged")
            let before = try ProjectConfigTests.configEvents(harness).count

            let saved = try await session.post(
                api, "/console/project",
                Self.form(page.html, ["authorizedDomains": "localhost\napp.example.com", "signIn.anonymous.enabled": "off"]))
            #expect(saved.headers[.location] == "/console/project?done=saved")
            let config = try await ProjectConfigTests.get(api)
            #expect(config["authorizedDomains"] == ["localhost", "app.example.com"])
            #expect(config["signIn"]?["anonymous"]?["enabled"] == false)
            #expect(try await api.v1("signUp", ["returnSecureToken": true]).errorCode == "OPERATION_NOT_ALLOWED")
            let events = try ProjectConfigTests.configEvents(harness)
            #expect(events.count == before + 1)
            #expect(events.last?.metadata.actorId == "console:owner")
            // Only what changed is recorded: the email privacy flag, untouched, is not in it.
            let payload = try #require(try events.last?.payloadJSON())
            #expect(payload.contains("app.example.com") && !payload.contains("improvedEmailPrivacy"))

            let shown = try await session.get(api, "/console/project?done=saved")
            #expect(shown.html.contains("The changes were saved.") && shown.html.contains("project.config_changed"))
            #expect(shown.html.contains("admin: console:owner"))

            let refused = try await session.post(api, "/console/project", Self.form(shown.html, ["authorizedDomains": "not a domain"]))
            #expect(refused.status == 400 && refused.html.contains("INVALID_CONFIG"))
            let badJSON = try await session.post(api, "/console/project", Self.form(shown.html, ["registeredApps.iosApps": "{"]))
            #expect(badJSON.status == 400 && badJSON.html.contains("must be a JSON list"))
            var forged = session
            forged.csrf = "forged"
            #expect(try await forged.post(api, "/console/project", Self.form(shown.html, ["authorizedDomains": "x.example"])).status == 403)
            #expect(try ProjectConfigTests.configEvents(harness).count == before + 1)
        }
    }

    @Test("cleanup: the preview chart while off, turned on through the v2 path, then what is scheduled and purged per day")
    func cleanup() async throws {
        try await APIHarness.run { harness, api in
            for _ in 0..<3 { #expect(try await api.v1("signUp", ["returnSecureToken": true]).status == 200) }
            let session = try await ConsoleChangeTests.session(api)
            let off = try await session.get(api, "/console/cleanup")
            #expect(off.status == 200 && off.html.contains("<dd>off</dd>"))
            #expect(off.html.contains("3 anonymous accounts would be scheduled") && off.html.contains("<svg"))
            #expect(off.html.contains("Accounts the cleanup would purge, by day (3 in all)"))
            #expect(!off.html.contains("style="))

            let on = try await session.post(api, "/console/cleanup", [("enabled", "on")])
            #expect(on.status == 303 && on.headers[.location] == "/console/cleanup?done=cleanupOn")
            #expect(try await ProjectConfigTests.get(api)["autodeleteAnonymousUsers"] == true)
            #expect(try ProjectConfigTests.configEvents(harness).last?.metadata.actorId == "console:owner")
            let status = try await session.get(api, "/console/cleanup?done=cleanupOn")
            #expect(status.html.contains("Anonymous cleanup is on") && status.html.contains("<dt>Scheduled</dt><dd>3</dd>"))
            #expect(!status.html.contains("would be scheduled"))

            #expect(try await session.post(api, "/console/cleanup", [("enabled", "maybe")]).status == 400)
            // Thirty days on (the session long over in production; development opens another),
            // the daemon's scheduler purges them: counted on today's bar.
            harness.clock.advance(milliseconds: 30 * 86_400_000 + 1000)
            let charted = "Anonymous accounts purged per day, last 30 days (3 in all)"
            var after = try await ConsoleTests.page(api, "/console/cleanup")
            for _ in 0..<100 where !after.html.contains(charted) {
                try await Task.sleep(for: .milliseconds(50))
                after = try await ConsoleTests.page(api, "/console/cleanup")
            }
            #expect(after.html.contains(charted) && after.html.contains("<dt>Due now</dt><dd>0</dd>"))
        }
    }

    @Test("the overview: accounts, sign-ups and sign-ins per day, accounts by provider, health; the ledger for the operator only")
    func overview() async throws {
        try await APIHarness.run(configure: ConsoleTests.production) { harness, api in
            func signUp(_ body: JSONValue) async throws -> Reply {
                try await api.post(APIClient.v1 + "accounts:signUp?key=key-a", body)
            }
            #expect(try await signUp(["returnSecureToken": true]).status == 200)
            #expect(try await signUp(["email": "a@example.com", "password": "correct-horse-42", "returnSecureToken": true]).status == 200)
            #expect(try await signUp(["email": "b@example.com", "password": "correct-horse-42", "returnSecureToken": true]).status == 200)
            let signedIn = try await api.post(
                APIClient.v1 + "accounts:signInWithPassword?key=key-a",
                ["email": "a@example.com", "password": "correct-horse-42", "returnSecureToken": true])
            #expect(signedIn.status == 200)

            let tenant = try await ConsoleTests.send(api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.tenantToken)")
            let tenantCookie: String = try #require(ConsoleTests.cookie(tenant.headers))
            let page = try await ConsoleTests.send(api, .get, "/console", cookie: tenantCookie, origin: nil)
            #expect(page.status == 200 && page.html.contains("<dt>Accounts</dt><dd>3</dd>"))
            #expect(page.html.contains("<dt>Sign-ups, last 30 days</dt><dd>3</dd>"))
            // Each sign-up signs in, and one more sign-in.
            #expect(page.html.contains("<dt>Sign-ins, last 30 days</dt><dd>4</dd>"))
            #expect(page.html.contains("<tr><td>password</td><td>2</td></tr><tr><td>anonymous</td><td>1</td></tr>"))
            #expect(page.html.contains("<td>ledger</td>") && page.html.contains("Accounts created per day, last 30 days (3 in all)"))
            // The ledger and the daemon's metrics are every project's: not a project admin's to see.
            #expect(!page.html.contains("Head hash") && !page.html.contains("head ") && !page.html.contains("Key metrics"))

            let operatorSession = try await ConsoleTests.send(
                api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.operatorToken)")
            let operatorCookie: String = try #require(ConsoleTests.cookie(operatorSession.headers))
            let head = try harness.context.store.ledgerHead()
            let full = try await ConsoleTests.send(api, .get, "/console", cookie: operatorCookie, origin: nil)
            #expect(full.html.contains("<dt>Head hash</dt><dd>\(head.hash)</dd>"))
            #expect(full.html.contains("never: run hearth audit verify"))
            // Read from what /metrics renders: the live data file and projections.
            #expect(full.html.contains("<h2>Key metrics</h2>") && full.html.contains("<dt>Disk full</dt><dd>no</dd>"))
            #expect(full.html.contains("<dt>Projections behind the ledger</dt><dd>0 events</dd>"))
            try harness.context.store.audit.record(try harness.context.store.audit.verify(), at: harness.clock.now())
            let verified = try await ConsoleTests.send(api, .get, "/console", cookie: operatorCookie, origin: nil)
            #expect(verified.html.contains("<dt>Result</dt><dd>intact: \(head.sequence) events, head hash \(head.hash)</dd>"))
        }
    }

    @Test("an operator chooses the project it looks at; a project's admin has no choice and can not make one")
    func projectChoice() async throws {
        try await APIHarness.run(configure: ConsoleTests.production) { _, api in
            #expect(try await api.post(APIClient.v1 + "accounts:signUp?key=key-b", ["returnSecureToken": true]).status == 200)
            let signedIn = try await ConsoleTests.send(api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.operatorToken)")
            let operatorCookie: String = try #require(ConsoleTests.cookie(signedIn.headers))
            let session = try await ConsoleChangeTests.session(api, cookie: operatorCookie)
            let users = try await session.get(api, "/console/users")
            #expect(users.html.contains("<option>project-a</option><option>project-b</option>"))
            let chosen = try await session.post(api, "/console/project-choice", [("project", "project-b")])
            #expect(chosen.status == 303)
            let cookie: String = try #require(ConsoleTests.cookie(chosen.headers))
            let page = try await ConsoleTests.send(api, .get, "/console/users", cookie: cookie, origin: nil)
            #expect(
                page.html.contains("<option selected>project-b</option>") && page.html.contains("Users <span class=\"muted\">(1)</span>"))

            let tenant = try await ConsoleTests.send(api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.tenantToken)")
            let tenantCookie: String = try #require(ConsoleTests.cookie(tenant.headers))
            let tenantSession = try await ConsoleChangeTests.session(api, cookie: tenantCookie)
            #expect(!(try await tenantSession.get(api, "/console/users")).html.contains("<select name=\"project\""))
            let refused = try await tenantSession.post(api, "/console/project-choice", [("project", "project-b")])
            #expect(refused.status == 403 && refused.headers[.setCookie] == nil)
        }
    }
}
