import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import HummingbirdTesting
import NIOCore
import Testing

/// The console's pages through the router: users paged in uid order, search, an account's
/// ledger and the account as it was, every value inert HTML, and the page never framed.
@Suite("console (development)")
struct ConsoleTests {
    static func page(_ api: APIClient, _ uri: String) async throws -> (status: Int, html: String, headers: HTTPFields) {
        let response = try await api.client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
        return (Int(response.status.code), String(buffer: response.body), response.headers)
    }

    @Test("users a page at a time, search, an account's timeline and its state before an email change; values inert")
    func pages() async throws {
        try await APIHarness.run { harness, api in
            let users: JSONValue = .array(
                (0..<120).map { index in
                    .object(["localId": .string(String(format: "user%03d", index)), "email": .string("u\(index)@example.com")])
                })
            #expect(try await api.admin("accounts:batchCreate", ["users": users]).status == 200)
            let hostile = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>"
            let created = try await api.admin(
                "accounts", ["localId": "target", "email": "before@example.com", "displayName": .string(hostile)])
            #expect(created.status == 200)
            harness.clock.advance(milliseconds: 60_000)
            let changedAt = harness.clock.now()
            #expect(try await api.admin("accounts:update", ["localId": "target", "email": "after@example.com"]).status == 200)

            let first = try await Self.page(api, "/console/users")
            #expect(first.status == 200)
            #expect(first.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(first.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
            #expect(first.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(first.html.contains("Users <span class=\"muted\">(121)</span>"))
            #expect(first.html.components(separatedBy: "<td class=\"uid\">").count - 1 == 50)
            // In uid order: "target" first, then user000 to user048; the next page after the last.
            #expect(first.html.contains(">target<") && first.html.contains("href=\"/console/users?after=user048\""))
            let third = try await Self.page(api, "/console/users?after=user098")
            #expect(third.html.contains(">user099<") && third.html.contains(">user119<") && !third.html.contains("Next page"))

            let found = try await Self.page(api, "/console/users?q=u7%40example.com")
            #expect(found.html.contains(">user007<") && found.html.components(separatedBy: "<td class=\"uid\">").count == 2)
            #expect(try await Self.page(api, "/console/users?q=nobody%40example.com").html.contains("No users match"))

            let account = try await Self.page(api, "/console/users/target")
            #expect(account.status == 200)
            #expect(account.html.contains("after@example.com"))
            #expect(account.html.contains("account.created") && account.html.contains("account.email_changed"))
            #expect(account.html.contains("admin: owner"))
            // Shown, never run: no tag of the name's own survives.
            #expect(!account.html.contains("<script>alert") && !account.html.contains("<img src=x"))
            #expect(account.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
            // As of just before the change: the old address.
            let before = try await Self.page(api, "/console/users/target?at=\(changedAt - 1)")
            #expect(before.html.contains("before@example.com") && !before.html.contains("<dd>after@example.com</dd>"))
            // As the form's datetime-local sends it, to the second or the minute (UTC).
            let local = String(Timestamp.iso8601(milliseconds: changedAt - 1000).prefix(19))
            for value in [local, String(local.prefix(16))] {
                let form = try await Self.page(api, "/console/users/target?at=\(value)")
                #expect(form.html.contains("<dd>before@example.com</dd>"), "\(value)")
            }
            // An anonymous account shows when the cleanup will purge it.
            #expect(
                try await ProjectConfigTests.patch(api, ["autodeleteAnonymousUsers": true], mask: "autodeleteAnonymousUsers").status == 200)
            let anonymous = try #require(try await api.v1("signUp", ["returnSecureToken": true]).string("localId"))
            let purge = try await Self.page(api, "/console/users/\(anonymous)")
            let due = Timestamp.iso8601(milliseconds: harness.clock.now() + 30 * 86_400_000)
            #expect(purge.html.contains("<dd>purged at \(due) (created while cleanup was on)</dd>"))
            let missing = try await Self.page(api, "/console/users/nobody")
            #expect(missing.status == 404)
            let stylesheet = try await Self.page(api, "/console/assets/console.css")
            #expect(stylesheet.headers[.contentType] == "text/css; charset=utf-8")
        }
    }

    /// The uids of a users page, in the order shown.
    static func uids(_ html: String) -> [String] {
        html.components(separatedBy: "<td class=\"uid\"><a href=\"").dropFirst().map { cell in
            String(cell.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" })
        }
    }

    @Test("sorted by creation or last sign-in, the most recent first, a page at a time; found by the start of an email")
    func sortedAndSearched() async throws {
        try await APIHarness.run { harness, api in
            for index in 0..<60 {
                harness.clock.advance(milliseconds: 1000)
                let uid = String(format: "s%02d", index)
                let email = index % 2 == 0 ? "even\(index)@example.com" : "odd\(index)@example.org"
                #expect(
                    try await api.admin("accounts", ["localId": .string(uid), "email": .string(email), "password": "correct-horse-42"])
                        .status == 200)
            }
            // s10 signs in last, s03 before it; the others never.
            for email in ["odd3@example.org", "even10@example.com"] {
                harness.clock.advance(milliseconds: 1000)
                let signedIn = try await api.v1(
                    "signInWithPassword", ["email": .string(email), "password": "correct-horse-42", "returnSecureToken": true])
                #expect(signedIn.status == 200)
            }
            let newest = try await Self.page(api, "/console/users?sort=creation")
            let first = Self.uids(newest.html)
            #expect(first.count == 50 && first.first == "s59" && first.last == "s10")
            #expect(newest.html.contains("aria-sort=\"descending\""))
            let nextLink = try #require(
                newest.html.components(separatedBy: "rel=\"next\" href=\"").dropFirst().first?.prefix { $0 != "\"" })
            let second = try await Self.page(api, String(nextLink).replacingOccurrences(of: "&amp;", with: "&"))
            #expect(Self.uids(second.html) == (0..<10).reversed().map { String(format: "s%02d", $0) })
            #expect(!second.html.contains("rel=\"next\""))

            let signIns = try await Self.page(api, "/console/users?sort=lastSignIn")
            #expect(Self.uids(signIns.html) == ["s10", "s03"])

            let prefix = try await Self.page(api, "/console/users?q=EVEN1")
            #expect(Self.uids(prefix.html) == ["s10", "s12", "s14", "s16", "s18"])
            let domain = try await Self.page(api, "/console/users?q=odd5%40")
            #expect(Self.uids(domain.html) == ["s05"])
            let byUid = try await Self.page(api, "/console/users?q=s07")
            #expect(Self.uids(byUid.html) == ["s07"])
            // The count is kept, not counted: it follows deletions.
            #expect(try await api.admin("accounts:delete", ["localId": "s07"]).status == 200)
            #expect(try await Self.page(api, "/console/users").html.contains("Users <span class=\"muted\">(59)</span>"))
            // A deleted account is still found by its uid, for its history.
            let deleted = try await Self.page(api, "/console/users?q=s07")
            #expect(Self.uids(deleted.html) == ["s07"] && deleted.html.contains("<span class=\"tag off\">deleted</span>"))
            #expect(Self.uids(try await Self.page(api, "/console/users?q=never-was").html).isEmpty)
        }
    }

    static func send(
        _ api: APIClient, _ method: HTTPRequest.Method, _ uri: String, cookie: String? = nil, origin: String? = "http://localhost",
        form: String? = nil
    ) async throws -> (status: Int, html: String, headers: HTTPFields) {
        var headers: HTTPFields = [HTTPField.Name("Host")!: "localhost"]
        if let cookie { headers[.cookie] = cookie }
        if let origin { headers[.origin] = origin }
        if form != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let response = try await api.client.executeRequest(
            uri: uri, method: method, headers: headers, body: form.map { ByteBuffer(string: $0) })
        return (Int(response.status.code), String(buffer: response.body), response.headers)
    }

    /// The `name=value` of a `Set-Cookie`.
    static func cookie(_ headers: HTTPFields) -> String? {
        headers[.setCookie].map { String($0.prefix { $0 != ";" }) }
    }

    static func production(_ configuration: inout ServerSettings) {
        TenantIsolationTests.configure(TemporaryDirectory("console-secrets"))(&configuration)
    }

    @Test(
        "production: no session, no page; an admin token signs in for an HttpOnly, SameSite=Strict cookie; sign-out needs the form's token")
    func productionSignIn() async throws {
        try await APIHarness.run(configure: Self.production) { harness, api in
            let anonymous = try await Self.send(api, .get, "/console/users", origin: nil)
            #expect(anonymous.status == 303 && anonymous.headers[.location] == "/console/sign-in")
            let form = try await Self.send(api, .get, "/console/sign-in", origin: nil)
            #expect(form.status == 200 && form.html.contains("type=\"password\" name=\"token\""))
            #expect(form.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)

            let wrong = try await Self.send(api, .post, "/console/sign-in", form: "token=not-a-token")
            #expect(wrong.status == 401 && wrong.headers[.setCookie] == nil)
            // A page elsewhere may not sign a browser in.
            let elsewhere = try await Self.send(
                api, .post, "/console/sign-in", origin: "https://evil.example", form: "token=\(TenantIsolationTests.tenantToken)")
            #expect(elsewhere.status == 403 && elsewhere.headers[.setCookie] == nil)

            let signedIn = try await Self.send(api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.tenantToken)")
            #expect(signedIn.status == 303 && signedIn.headers[.location] == "/console/users")
            let setCookie = try #require(signedIn.headers[.setCookie])
            #expect(setCookie.contains("; HttpOnly") && setCookie.contains("; SameSite=Strict") && setCookie.contains("; Path=/console"))
            let cookie = try #require(Self.cookie(signedIn.headers))
            #expect(!cookie.contains(TenantIsolationTests.tenantToken))

            // A project-scoped token sees its project.
            let users = try await Self.send(api, .get, "/console/users", cookie: cookie, origin: nil)
            #expect(users.status == 200 && users.html.contains("<span class=\"project\">project-a</span>"))
            let csrf = try #require(users.html.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.prefix { $0 != "\"" })

            let forged = try await Self.send(api, .post, "/console/sign-out", cookie: cookie, form: "csrf=forged")
            #expect(forged.status == 403)
            let noOrigin = try await Self.send(api, .post, "/console/sign-out", cookie: cookie, origin: nil, form: "csrf=\(csrf)")
            #expect(noOrigin.status == 403)
            let out = try await Self.send(api, .post, "/console/sign-out", cookie: cookie, form: "csrf=\(csrf)")
            #expect(out.status == 303 && out.headers[.setCookie]?.contains("Max-Age=0") == true)

            // Unused for 30 minutes, a session ends.
            harness.clock.advance(milliseconds: 31 * 60_000)
            let idle = try await Self.send(api, .get, "/console/users", cookie: cookie, origin: nil)
            #expect(idle.status == 303 && idle.headers[.location] == "/console/sign-in")
        }
    }

    @Test("a session is renewed as it is used, up to twelve hours")
    func renewal() async throws {
        try await APIHarness.run(configure: Self.production) { harness, api in
            let signedIn = try await Self.send(api, .post, "/console/sign-in", form: "token=\(TenantIsolationTests.operatorToken)")
            var cookie = try #require(Self.cookie(signedIn.headers))
            for _ in 0..<4 {
                harness.clock.advance(milliseconds: 20 * 60_000)
                let page = try await Self.send(api, .get, "/console/users", cookie: cookie, origin: nil)
                #expect(page.status == 200)
                cookie = Self.cookie(page.headers) ?? cookie
            }
            // 80 minutes in, used every 20: alive, and still the operator's.
            let page = try await Self.send(api, .get, "/console/users", cookie: cookie, origin: nil)
            #expect(page.status == 200 && page.html.contains("Sign out"))
            // Twelve hours after its sign-in, it ends however busy.
            for _ in 0..<33 {
                harness.clock.advance(milliseconds: 20 * 60_000)
                let used = try await Self.send(api, .get, "/console/users", cookie: cookie, origin: nil)
                cookie = Self.cookie(used.headers) ?? cookie
            }
            let ended = try await Self.send(api, .get, "/console/users", cookie: cookie, origin: nil)
            #expect(ended.status == 303)
        }
    }

    @Test("disableConsole: not served at all")
    func disabled() async throws {
        try await APIHarness.run(configure: { $0.listen.disableConsole = true }) { _, api in
            let page = try await Self.page(api, "/console/users")
            #expect(page.status == 404)
        }
    }
}
