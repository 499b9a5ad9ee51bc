import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

/// The console's changes through the router: each a form with the session's cross-site token,
/// from the console's own origin, made through the API's service calls and recorded as the
/// console's administrator; refused changes say why on the page.
@Suite("console changes")
struct ConsoleChangeTests {
    /// A console visit: its session cookie and the token its forms carry.
    struct Session {
        var cookie: String
        var csrf: String

        func post(_ api: APIClient, _ uri: String, _ fields: [(name: String, value: String)], origin: String? = "http://localhost")
            async throws -> (status: Int, html: String, headers: HTTPFields)
        {
            try await ConsoleTests.send(
                api, .post, uri, cookie: cookie, origin: origin, form: FormEncoding.encode([("csrf", csrf)] + fields))
        }

        func get(_ api: APIClient, _ uri: String) async throws -> (status: Int, html: String, headers: HTTPFields) {
            try await ConsoleTests.send(api, .get, uri, cookie: cookie, origin: nil)
        }
    }

    /// Opens a console page and keeps the session it started (development) or continues.
    static func session(_ api: APIClient, cookie: String? = nil) async throws -> Session {
        let page = try await ConsoleTests.send(api, .get, "/console/add-user", cookie: cookie, origin: nil)
        let csrf = try #require(page.html.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.prefix { $0 != "\"" })
        return Session(cookie: try #require(cookie ?? ConsoleTests.cookie(page.headers)), csrf: String(csrf))
    }

    @Test("edit, disable, enable, revoke, link and delete: recorded as the console's admin; claims by Firebase's rules")
    func accountChanges() async throws {
        try await APIHarness.run { harness, api in
            let signedUp = try await api.signUp(email: "ada@example.com")
            let uid = try #require(signedUp.string("localId"))
            let session = try await Self.session(api)
            let path = "/console/users/\(uid)"

            let edited = try await session.post(
                api, path + "/edit",
                [
                    ("email", "ada@example.org"), ("displayName", "Ada L."), ("photoUrl", ""), ("emailVerified", "on"),
                    ("customClaims", #"{"role":"support"}"#), ("password", ""),
                ])
            #expect(edited.status == 303 && edited.headers[.location] == path + "?done=saved")
            let account = try #require(try harness.context.store.read { try $0.account(UserID(uid)!, in: APIHarness.project) })
            #expect(account.email == "ada@example.org" && account.displayName == "Ada L." && account.emailVerified)
            #expect(account.customClaims == #"{"role":"support"}"#)
            let shown = try await session.get(api, path + "?done=saved")
            #expect(shown.html.contains("The changes were saved.") && shown.html.contains("admin: console:owner"))

            // The same form again changes nothing, and records nothing.
            let before = try harness.eventTypes(of: uid).count
            let same = try await session.post(
                api, path + "/edit",
                [
                    ("email", "ada@example.org"), ("displayName", "Ada L."), ("emailVerified", "on"),
                    ("customClaims", #"{"role":"support"}"#),
                ])
            let after = try harness.eventTypes(of: uid).count
            #expect(same.headers[.location] == path + "?done=unchanged" && after == before)

            // Firebase's claim rules: no reserved name, at most 1,000 characters.
            let reserved = try await session.post(api, path + "/edit", [("email", "ada@example.org"), ("customClaims", #"{"sub":"x"}"#)])
            #expect(reserved.status == 400 && reserved.html.contains("role=\"alert\">FORBIDDEN_CLAIM : sub"))
            let long = #"{"k":""# + String(repeating: "x", count: 1000) + #""}"#
            let tooLong = try await session.post(api, path + "/edit", [("customClaims", long)])
            #expect(tooLong.status == 400 && tooLong.html.contains("CLAIMS_TOO_LARGE"))
            let weak = try await session.post(api, path + "/edit", [("email", "ada@example.org"), ("password", "abc")])
            #expect(weak.status == 400 && weak.html.contains("WEAK_PASSWORD"))

            let disabled = try await session.post(api, path + "/disable", [])
            #expect(disabled.headers[.location] == path + "?done=disabled")
            let refused = try await api.v1(
                "signInWithPassword", ["email": "ada@example.org", "password": "correct-horse-42", "returnSecureToken": true])
            #expect(refused.errorCode == "USER_DISABLED")
            #expect(try await session.post(api, path + "/enable", []).headers[.location] == path + "?done=enabled")

            let signedIn = try await api.v1(
                "signInWithPassword", ["email": "ada@example.org", "password": "correct-horse-42", "returnSecureToken": true])
            let refreshToken = try #require(signedIn.string("refreshToken"))
            #expect(try await api.refresh(refreshToken).status == 200)
            harness.clock.advance(milliseconds: 2000)
            #expect(try await session.post(api, path + "/revoke", []).headers[.location] == path + "?done=revoked")
            // Revoked: the token is retired with the account's other sessions.
            #expect(try await api.refresh(refreshToken).errorCode == "TOKEN_EXPIRED")

            let link = try await session.post(api, path + "/link", [("type", "PASSWORD_RESET"), ("continueUrl", "")])
            #expect(link.status == 200 && link.html.contains("mode=resetPassword") && link.html.contains("id=\"generated-link\""))
            let signInLink = try await session.post(api, path + "/link", [("type", "EMAIL_SIGNIN"), ("continueUrl", "")])
            #expect(signInLink.status == 400 && signInLink.html.contains("MISSING_CONTINUE_URI"))
            let withContinue = try await session.post(
                api, path + "/link", [("type", "EMAIL_SIGNIN"), ("continueUrl", "http://localhost/finish")])
            #expect(withContinue.status == 200 && withContinue.html.contains("mode=signIn"))

            let unconfirmed = try await session.post(api, path + "/delete", [])
            let last = try harness.eventTypes(of: uid).last
            #expect(unconfirmed.status == 400 && last != "account.deleted")
            let deleted = try await session.post(api, path + "/delete", [("confirm", "yes")])
            #expect(deleted.headers[.location] == path + "?done=deleted")
            let gone = try await session.get(api, path + "?done=deleted")
            #expect(gone.status == 200 && gone.html.contains("Deleted: its history stays.") && gone.html.contains("account.deleted"))

            let actors = try harness.context.store.audit.events(of: .account(APIHarness.project, UserID(uid)!)).map(\.metadata)
                .filter { $0.actor == .admin }.compactMap(\.actorId)
            #expect(!actors.isEmpty && actors.allSatisfy { $0 == "console:owner" })
        }
    }

    @Test("a quote followed by a combining mark is escaped too: one Swift Character, but a quote to the browser")
    func combiningQuote() async throws {
        try await APIHarness.run { _, api in
            let name = "x\"\u{301} autofocus onfocus=alert(1) y=\"\u{301}"
            #expect(try await api.admin("accounts", ["localId": "quoted", "displayName": .string(name)]).status == 200)
            let session = try await Self.session(api)
            let page = try await session.get(api, "/console/users/quoted")
            // The edit form's value attribute holds it: no quote of it survives unescaped.
            let escaped = "value=\"x&quot;\u{301} autofocus onfocus=alert(1) y=&quot;\u{301}\""
            let raw = "\"\u{301} autofocus"
            #expect(page.html.contains(escaped))
            #expect(!page.html.contains(raw))
        }
    }

    @Test("a change without the session's token, from another origin or without a session is refused")
    func forgedChanges() async throws {
        try await APIHarness.run { harness, api in
            let uid = try #require(try await api.signUp(email: "grace@example.com").string("localId"))
            let session = try await Self.session(api)
            let path = "/console/users/\(uid)/disable"
            var forged = session
            forged.csrf = "not-the-token"
            #expect(try await forged.post(api, path, []).status == 403)
            #expect(try await session.post(api, path, [], origin: "https://evil.example").status == 403)
            #expect(try await session.post(api, path, [], origin: nil).status == 403)
            let noSession = try await ConsoleTests.send(api, .post, path, form: "csrf=\(session.csrf)")
            #expect(noSession.status == 403)
            let account = try harness.context.store.read { try $0.account(UserID(uid)!, in: APIHarness.project) }
            #expect(account?.disabled == false)
        }
    }

    @Test("add a user: created by the Admin SDK's rules; a refusal keeps the form's values but never the password")
    func addUser() async throws {
        try await APIHarness.run { harness, api in
            let session = try await Self.session(api)
            let form = try await session.get(api, "/console/add-user")
            #expect(form.status == 200 && form.html.contains("action=\"/console/add-user\""))
            let added = try await session.post(
                api, "/console/add-user",
                [("email", "new@example.com"), ("password", "correct-horse-42"), ("displayName", "New"), ("uid", "support/1 #a")])
            #expect(added.status == 303 && added.headers[.location] == "/console/users/support%2F1%20%23a?done=created")
            let page = try await session.get(api, "/console/users/support%2F1%20%23a?done=created")
            #expect(page.status == 200 && page.html.contains("The user was created.") && page.html.contains("new@example.com"))
            let signedIn = try await api.v1(
                "signInWithPassword", ["email": "new@example.com", "password": "correct-horse-42", "returnSecureToken": true])
            #expect(signedIn.string("localId") == "support/1 #a")

            let taken = try await session.post(
                api, "/console/add-user", [("email", "new@example.com"), ("password", "secret-password-9"), ("displayName", "Again")])
            #expect(taken.status == 400 && taken.html.contains("EMAIL_EXISTS") && taken.html.contains("value=\"Again\""))
            #expect(!taken.html.contains("secret-password-9"))
            #expect(try harness.eventTypes(of: "support/1 #a").first == "account.created")
        }
    }

    @Test("production: a project's admin changes its project only, recorded with its token's name")
    func productionChanges() async throws {
        try await APIHarness.run(configure: ConsoleTests.production) { harness, api in
            let signedIn = try await ConsoleTests.send(api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.tenantToken)")
            let cookie: String = try #require(ConsoleTests.cookie(signedIn.headers))
            let session = try await Self.session(api, cookie: cookie)
            let added = try await session.post(api, "/console/add-user", [("email", "a@example.com"), ("uid", "tenant-user")])
            #expect(added.status == 303)
            let projectA = ProjectID("project-a")!
            let events = try harness.context.store.audit.events(of: .account(projectA, UserID("tenant-user")!))
            #expect(events.first?.metadata.actorId == "console:tenant-a")
            #expect(try harness.context.store.read { try $0.account(UserID("tenant-user")!, in: APIHarness.project) } == nil)
        }
    }
}
