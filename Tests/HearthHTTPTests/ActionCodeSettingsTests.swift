import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthMail
import HearthTesting
import HearthWire
import NIOCore
import Testing

/// ActionCodeSettings as Firebase holds them (production): continue URLs on authorized domains
/// for apps and admins, sign-in links opened in the app, mobile identities shaping the link, link
/// domains the project configured, and code lifetimes by type.
@Suite("ActionCodeSettings (production)")
struct ActionCodeSettingsTests {
    static func run(_ body: @escaping @Sendable (APIHarness, APIClient) async throws -> Void) async throws {
        // A real queue whose service never runs here: links are taken, never sent.
        let relay = try SMTPClient(settings: SMTPSettings(host: "127.0.0.1", port: 9, security: .none))
        let mailer = ActionLinkEmailer(queue: MailQueue(client: relay, capacity: 100), from: "auth@example.com")
        try await APIHarness.run(
            configure: { configuration in
                RecentSignInTests.production(&configuration)
                configuration.mail.actionUrl = "https://app.example.com/auth/action"
                configuration.mail.actionCodeLifetimeSeconds = ["PASSWORD_RESET": 3600]
                configuration.projects.declared = [
                    "demo-hearth": [
                        "authorizedDomains": ["localhost", "app.example.com"], "linkDomains": ["links.example.com", "alt.example.com"],
                    ]
                ]
            }, mailer: mailer, body)
    }

    static func send(_ api: APIClient, admin: Bool = false, _ fields: [String: JSONValue]) async throws -> Reply {
        var body = fields
        body["email"] = body["email"] ?? "reader@example.com"
        if admin {
            body["returnOobLink"] = true
            return try await api.post(
                APIClient.v1 + "projects/demo-hearth/accounts:sendOobCode", .object(body), headers: HeadfulSignInTests.productionAdmin)
        }
        return try await api.v1("sendOobCode", .object(body))
    }

    @Test("each setting is checked, for apps and admins alike, with Firebase's errors")
    func checks() async throws {
        try await Self.run { _, api in
            _ = try await api.signUp(email: "reader@example.com")
            let signIn: [String: JSONValue] = [
                "requestType": "EMAIL_SIGNIN", "continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": true,
            ]
            func with(_ changes: [String: JSONValue?]) -> [String: JSONValue] {
                var fields = signIn
                for (name, value) in changes { fields[name] = value }
                return fields
            }
            let cases: [([String: JSONValue], String)] = [
                (with(["continueUrl": nil]), "MISSING_CONTINUE_URI"),
                (with(["canHandleCodeInApp": nil]), "INVALID_ARGUMENT"),
                (with(["continueUrl": "https://evil.example/finish"]), "UNAUTHORIZED_DOMAIN"),
                (with(["continueUrl": "javascript:alert(1)"]), "INVALID_CONTINUE_URI"),
                (with(["iOSAppStoreId": "123456"]), "MISSING_IOS_BUNDLE_ID"),
                (with(["androidInstallApp": true]), "MISSING_ANDROID_PACKAGE_NAME"),
                (with(["androidMinimumVersion": "12"]), "MISSING_ANDROID_PACKAGE_NAME"),
                (with(["linkDomain": "elsewhere.example"]), "INVALID_HOSTING_LINK_DOMAIN"),
                (with(["dynamicLinkDomain": "example.page.link"]), "INVALID_DYNAMIC_LINK_DOMAIN"),
                // Any code's continue URL, not only a sign-in link's.
                (["requestType": "PASSWORD_RESET", "continueUrl": "https://evil.example/"], "UNAUTHORIZED_DOMAIN"),
            ]
            for (fields, expected) in cases {
                for admin in [false, true] {
                    let reply = try await Self.send(api, admin: admin, fields)
                    #expect(reply.errorCode == expected, "\(fields) admin: \(admin): \(reply.json)")
                }
            }
            #expect(try await Self.send(api, signIn).status == 200)
        }
    }

    @Test("an app's link is served on the project's link domain with its identities (ibi, apn, amv); a web link is the handler's")
    func linkShapes() async throws {
        try await Self.run { _, api in
            _ = try await api.signUp(email: "reader@example.com")
            let mobile: [String: JSONValue] = [
                "requestType": "EMAIL_SIGNIN", "continueUrl": "https://app.example.com/finish?cart=1", "canHandleCodeInApp": true,
                "iOSBundleId": "com.example.ios", "androidPackageName": "com.example.android", "androidInstallApp": true,
                "androidMinimumVersion": "12",
            ]
            let link = try #require(try await Self.send(api, admin: true, mobile).string("oobLink"))
            let components = try #require(URLComponents(string: link))
            #expect(components.scheme == "https" && components.host == "links.example.com" && components.path == "/auth/action", "\(link)")
            let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
            #expect(query["mode"] == "signIn" && query["oobCode"] != nil && query["continueUrl"] == "https://app.example.com/finish?cart=1")
            #expect(query["ibi"] == "com.example.ios" && query["apn"] == "com.example.android" && query["amv"] == "12")

            var chosen = mobile
            chosen["linkDomain"] = "alt.example.com"
            let alternative = try #require(try await Self.send(api, admin: true, chosen).string("oobLink"))
            #expect(URLComponents(string: alternative)?.host == "alt.example.com")

            let web = try #require(
                try await Self.send(api, admin: true, ["requestType": "PASSWORD_RESET", "iOSBundleId": "com.example.ios"]).string("oobLink")
            )
            #expect(web.hasPrefix("https://app.example.com/auth/action?mode=resetPassword&") && !web.contains("ibi="), "\(web)")
        }
    }

    @Test("code lifetimes by type: a reset link lasts the hour configured, a sign-in link its own six")
    func lifetimes() async throws {
        try await Self.run { harness, api in
            _ = try await api.signUp(email: "reader@example.com")
            let reset = try await Self.send(api, admin: true, ["requestType": "PASSWORD_RESET"])
            let signIn = try await Self.send(
                api, admin: true,
                ["requestType": "EMAIL_SIGNIN", "continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": true])
            harness.clock.advance(milliseconds: 61 * 60_000)
            let expired = try await api.v1("resetPassword", ["oobCode": reset["oobCode"] ?? .null])
            #expect(expired.errorCode == "EXPIRED_OOB_CODE")
            let stillGood = try await api.v1("resetPassword", ["oobCode": signIn["oobCode"] ?? .null])
            #expect(stillGood["requestType"] == "EMAIL_SIGNIN")
        }
    }

    @Test("development keeps the emulator's leniency: an admin's sign-in link needs no continue URL, and may point anywhere")
    func developmentLeniency() async throws {
        try await APIHarness.run { _, api in
            let plain = try await api.admin(
                "accounts:sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "a@example.com", "returnOobLink": true])
            #expect(plain.status == 200)
            let anywhere = try await api.admin(
                "accounts:sendOobCode",
                ["requestType": "EMAIL_SIGNIN", "email": "a@example.com", "returnOobLink": true, "continueUrl": "https://example.com/x"])
            #expect(anywhere.string("oobLink")?.contains("continueUrl=https%3A%2F%2Fexample.com%2Fx") == true)
        }
    }
}
