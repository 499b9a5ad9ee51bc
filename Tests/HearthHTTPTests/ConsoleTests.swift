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
            #expect(try await Self.page(api, "/console/users/nobody").status == 404)
            let stylesheet = try await Self.page(api, "/console/assets/console.css")
            #expect(stylesheet.headers[.contentType] == "text/css; charset=utf-8")
        }
    }

    @Test("not served in production until its sign-in lands")
    func production() async throws {
        try await APIHarness.run(configure: RecentSignInTests.production) { _, api in
            let page = try await Self.page(api, "/console/users")
            #expect(page.status == 404)
        }
    }
}
